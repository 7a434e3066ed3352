// Bringing a PostgreSQL database to this binary's schema (store/migrations/postgres/), or checking that it is there.
// Every instance migrates as it starts, so several may try at once: a session advisory lock makes the others wait
// until the first is done, and they then find nothing left to apply. Each step commits with its schema_migrations
// row, so a step is applied entirely and recorded, or not at all.
import type { ReservedSQL, SQL } from 'bun'
import { newerSchema, notCurrentSchema, POSTGRES_MIGRATIONS, SchemaMismatch } from '../migrations/index.ts'

const LOCK = 'trellis:migrate'

/** Applies the steps `where` (the database, as messages name it) lacks; answers how many this call applied. */
export async function migratePostgres(sql: SQL, where: string): Promise<number> {
  // A session lock belongs to one connection: everything under it runs on this one, taken out of the pool.
  const connection = await sql.reserve()
  try {
    await connection.unsafe('SELECT pg_advisory_lock(hashtext($1))', [LOCK])
    try {
      return await migrateLocked(connection, where)
    } finally {
      // Should the connection be gone, so is the lock: its own error, if any, is the one to report.
      await connection.unsafe('SELECT pg_advisory_unlock(hashtext($1))', [LOCK]).catch(() => {})
    }
  } finally {
    connection.release()
  }
}

async function migrateLocked(connection: ReservedSQL, where: string): Promise<number> {
  await connection.unsafe(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, name text COLLATE "C" NOT NULL, applied_at bigint NOT NULL)',
  )
  const applied = await appliedVersions(connection)
  // An older binary on a newer database would write rows the newer schema's rules (triggers, columns) do not expect.
  const newer = newerSchema(Math.max(0, ...applied), `the database ${where}`)
  if (newer) throw new SchemaMismatch(newer)
  let count = 0
  for (const m of POSTGRES_MIGRATIONS) {
    if (applied.has(m.version)) continue
    await connection.begin(async (tx) => {
      // The simple query protocol: a step is several statements, some with $$-quoted PL/pgSQL bodies.
      await tx.unsafe(m.sql).simple()
      await tx.unsafe('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        Math.floor(Date.now() / 1000),
      ])
    })
    count++
  }
  return count
}

/** For the 'current' open mode (verify-ledger): exactly this binary's schema, neither older nor newer. */
export async function requireCurrentPostgres(sql: SQL, where: string): Promise<void> {
  const [{ present }] = await sql.unsafe("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
  const version = present ? Math.max(0, ...(await appliedVersions(sql))) : 0
  const problem = notCurrentSchema(version, `the database ${where}`)
  if (problem) throw new SchemaMismatch(problem)
}

/** bigint arrives as text. */
const appliedVersions = async (sql: SQL) =>
  new Set(((await sql.unsafe('SELECT version FROM schema_migrations')) as { version: string }[]).map((r) => Number(r.version)))
