// The PostgreSQL side of a run: a cluster (given by an admin URL, or a throwaway one from dev/postgres.ts), a database
// created for the run and dropped after it, and the seeded market moved into it by `trellis migrate-to-postgres`, as
// an operator would move an embedded instance over.
import { SQL } from 'bun'
import { startPostgres } from '../../dev/postgres.ts'
import { shownPostgresUrl } from '../../src/store/postgres/url.ts'
import { clusterUsage, postmasterOf } from './resources.ts'

export interface Cluster {
  /** The admin URL, as messages show it (no password). */
  shown: string
  /** Started by this run (--postgres), or given (--database-url). */
  throwaway: boolean
  /** The postmaster's pid when the cluster runs on this machine, else null (no CPU or memory figures). */
  postmaster: number | null
  version: string
  /** A new database for the run (a copy of database `template`, when given); the returned URL reaches it. Dropped by `close`. */
  createDatabase(template?: string): Promise<{ name: string; url: string }>
  /** Statements run so far in database `name` (pg_stat_statements' calls), or null where it is not loaded. */
  statements(name: string): Promise<number | null>
  /**
   * After a bulk load: VACUUM (ANALYZE) of the database at `url` (the planner's statistics, the visibility map), then a
   * CHECKPOINT (the load's dirty pages written), so neither lands inside the measures. Answers what ran, and how long.
   */
  settle(url: string): Promise<{ ms: number; done: string[]; skipped: string[] }>
  close(): Promise<void>
}

/** The same cluster and credentials, another database. */
export function urlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

export async function openCluster(adminUrl: string | null, log: (line: string) => void): Promise<Cluster> {
  // Statements are counted per request (pg_stat_statements) where the cluster loads it: always on a throwaway one.
  const throwaway =
    adminUrl === null
      ? await startPostgres({ settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=top'] })
      : null
  const url = adminUrl ?? throwaway!.adminUrl
  if (throwaway) log(`bench: started a throwaway PostgreSQL cluster at ${shownPostgresUrl(url)}`)
  const admin = new SQL(url, { max: 1, connectionTimeout: 10 })
  const created: string[] = []
  const close = async () => {
    for (const name of created.splice(0))
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) => log(`bench: could not drop database ${name}: ${e}`))
    await admin.close().catch(() => {})
    await throwaway?.stop()
  }
  try {
    const [{ server_version: version }] = await admin.unsafe('SHOW server_version')
    return {
      shown: shownPostgresUrl(url),
      throwaway: throwaway !== null,
      postmaster: await postmasterOf(admin),
      version: String(version),
      async createDatabase(template?: string) {
        const name = `trellis_bench_${process.pid}_${Date.now()}`
        await admin.unsafe(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`)
        created.push(name)
        return { name, url: urlOf(url, name) }
      },
      async statements(name: string) {
        try {
          await admin.unsafe('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
          const [row] = await admin.unsafe(
            'SELECT COALESCE(sum(calls), 0)::bigint AS calls FROM pg_stat_statements s JOIN pg_database d ' +
              'ON d.oid = s.dbid WHERE d.datname = $1',
            [name],
          )
          return Number(row.calls)
        } catch {
          return null // not in shared_preload_libraries (a given cluster)
        }
      },
      async settle(databaseUrl: string) {
        const started = performance.now()
        const done: string[] = []
        const skipped: string[] = []
        const db = new SQL(databaseUrl, { max: 1, connectionTimeout: 10 })
        try {
          await db.unsafe('VACUUM (ANALYZE)')
          done.push('VACUUM (ANALYZE)')
        } finally {
          await db.close()
        }
        // CHECKPOINT needs a superuser or pg_checkpoint: a role without either still gets a run, without it.
        await admin.unsafe('CHECKPOINT').then(
          () => done.push('CHECKPOINT'),
          (error) => skipped.push(`CHECKPOINT: ${(error as Error).message}`),
        )
        return { ms: performance.now() - started, done, skipped }
      },
      close,
    }
  } catch (error) {
    await close()
    throw new Error(`cannot use the PostgreSQL cluster at ${shownPostgresUrl(url)}: ${(error as Error).message}`)
  }
}

export interface MigrateResult {
  command: string
  exit_code: number | null
  ms: number
  /** What the backup held and the restore moved (rows and items), from the command's JSON. */
  moved: Record<string, number> | null
  verify: { ok: boolean; [key: string]: unknown } | null
  /** Exit 0 and `verify` found nothing. */
  clean: boolean
  /** The command's own CPU time, and the cluster's meanwhile (null when it runs elsewhere). */
  trellis_cpu_s: number
  postgres_cpu_s: number | null
  stderr: string
}

/** `trellis migrate-to-postgres --data-dir <dataDir> --database-url <url>`, timed. */
export async function migrateToPostgres(binary: string, dataDir: string, url: string, postmaster: number | null): Promise<MigrateResult> {
  const args = ['migrate-to-postgres', '--data-dir', dataDir, '--database-url', url]
  const before = postmaster === null ? null : clusterUsage(postmaster).cpu_s
  const started = performance.now()
  const proc = Bun.spawn([binary, ...args], {
    env: { ...process.env, TRELLIS_LOG: 'warn' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  const exitCode = await proc.exited
  const ms = performance.now() - started
  const after = postmaster === null ? null : clusterUsage(postmaster).cpu_s
  let result: { moved?: Record<string, number>; verify?: MigrateResult['verify'] } | null = null
  try {
    result = JSON.parse(out)
  } catch {
    result = null
  }
  const usage = proc.resourceUsage()
  return {
    command: `dist/trellis ${args.slice(0, -1).join(' ')} ${shownPostgresUrl(url)}`,
    exit_code: exitCode,
    ms,
    moved: result?.moved ?? null,
    verify: result?.verify ?? null,
    clean: exitCode === 0 && result?.verify?.ok === true,
    trellis_cpu_s: usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : 0,
    postgres_cpu_s: before === null || after === null ? null : after - before,
    stderr: err.trim().slice(-2000),
  }
}
