// One suite, two engines: with TRELLIS_TEST_POSTGRES set (an admin URL, postgres://postgres@127.0.0.1:5432/postgres),
// each test server gets a PostgreSQL database of its own, copied from a template that is migrated once (CREATE
// DATABASE … TEMPLATE takes milliseconds; migrating takes far longer). Unset: nothing here runs, servers are embedded.
import { SQL } from 'bun'
import { createHash } from 'node:crypto'
import { openRecords } from '../src/store/open.ts'
import { POSTGRES_MIGRATIONS } from '../src/store/migrations/index.ts'

export const TEST_POSTGRES = process.env.TRELLIS_TEST_POSTGRES || null
/**
 * A transaction pooler (PgBouncer) in front of that cluster, as a URL of its own (scripts/with-pgbouncer.ts): set, each
 * test server reaches its database through it, and directly for what needs a session (TRELLIS_DATABASE_DIRECT_URL).
 * Databases are still made and dropped directly.
 */
export const TEST_POOLER = process.env.TRELLIS_TEST_POOLER || null

/** The database at `direct` through the suite's pooler, if any: the same user and database on the pooler's port. */
export function pooledUrl(direct: string): string {
  if (!TEST_POOLER) return direct
  const url = new URL(direct)
  url.host = new URL(TEST_POOLER).host
  return url.toString()
}

/** A server's environment for the database at `direct`: through the suite's pooler when there is one. */
export const recordsEnvFor = (direct: string): Record<string, string> =>
  TEST_POOLER ? { TRELLIS_DATABASE_URL: pooledUrl(direct), TRELLIS_DATABASE_DIRECT_URL: direct } : { TRELLIS_DATABASE_URL: direct }

/** The admin URL with another database in it. */
export function databaseUrl(admin: string, database: string): string {
  const url = new URL(admin)
  url.pathname = `/${database}`
  return url.toString()
}

const admin = () => new SQL(TEST_POSTGRES!, { max: 1 })

// The template is named after the migrations it holds: a run after a change of schema makes a new one, a run after
// none reuses it.
const templateName = () =>
  `trellis_template_${createHash('sha256')
    .update([...POSTGRES_MIGRATIONS.map((m) => m.sql), 'amcheck'].join('\n'))
    .digest('hex')
    .slice(0, 16)}`

let template: Promise<string> | null = null

/** Made under another name and renamed once migrated, so a run that dies half-way never leaves a broken template. */
async function ensureTemplate(): Promise<string> {
  const name = templateName()
  const sql = admin()
  try {
    if ((await sql.unsafe('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0) return name
    const building = `${name}_${process.pid}_${Date.now()}`
    await sql.unsafe(`CREATE DATABASE "${building}"`)
    const records = await openRecords({ engine: 'postgres', url: databaseUrl(TEST_POSTGRES!, building), pool: 1 }, 'migrate')
    await records.close()
    // amcheck, which PostgreSQL ships, so `trellis verify` on a test server checks the indexes rather than saying it skipped them.
    const inside = new SQL(databaseUrl(TEST_POSTGRES!, building), { max: 1 })
    try {
      await inside.unsafe('CREATE EXTENSION IF NOT EXISTS amcheck')
    } finally {
      await inside.close()
    }
    try {
      await sql.unsafe(`ALTER DATABASE "${building}" RENAME TO "${name}"`)
    } catch (error) {
      if ((error as { errno?: string }).errno !== '42P04') throw error // another run renamed its own first: use that one
      await sql.unsafe(`DROP DATABASE "${building}"`)
    }
    return name
  } finally {
    await sql.close()
  }
}

export interface TestDatabase {
  /** Through the suite's pooler when there is one. */
  url: string
  /** The database without the pooler; null without one. */
  directUrl: string | null
  /** What a server on it is given: TRELLIS_DATABASE_URL, and TRELLIS_DATABASE_DIRECT_URL behind a pooler. */
  env: Record<string, string>
  drop(): Promise<void>
}

/** A fresh, migrated database for one test server; null when the suite runs on the embedded engine. */
export async function testDatabase(): Promise<TestDatabase | null> {
  if (!TEST_POSTGRES) return null
  template ??= ensureTemplate().catch((error) => {
    template = null
    throw error
  })
  const from = await template
  const name = `t_${process.pid}_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const sql = admin()
  try {
    await sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${from}"`)
  } finally {
    await sql.close()
  }
  const direct = databaseUrl(TEST_POSTGRES, name)
  return {
    url: pooledUrl(direct),
    directUrl: TEST_POOLER ? direct : null,
    env: recordsEnvFor(direct),
    async drop() {
      const sql = admin()
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      } finally {
        await sql.close()
      }
    },
  }
}

/** A PostgreSQL cluster to make databases in: the suite's (TRELLIS_TEST_POSTGRES), or a throwaway one of this test's. */
export async function postgresForTest(): Promise<{ adminUrl: string; stop(): Promise<void> }> {
  if (TEST_POSTGRES) return { adminUrl: TEST_POSTGRES, stop: async () => {} }
  const { startPostgres } = await import('./postgres.ts')
  return startPostgres()
}

/** A new, empty database (not migrated) in the cluster at `adminUrl`; its URL. */
export async function emptyDatabase(adminUrl: string): Promise<string> {
  const name = `e_${process.pid}_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const sql = new SQL(adminUrl, { max: 1 })
  try {
    await sql.unsafe(`CREATE DATABASE "${name}"`)
  } finally {
    await sql.close()
  }
  return databaseUrl(adminUrl, name)
}
