// Opening the records in PostgreSQL: a pool of Bun's built-in SQL client, reached and (for the server and the data
// commands) migrated before anything is served, so an unreachable database, a wrong password or a missing database
// is one line at start, naming the URL without its password.
import { SQL } from 'bun'
import { randomUUID } from 'node:crypto'
import type { OpenMode } from '../sqlite/database.ts'
import { SchemaMismatch } from '../migrations/index.ts'
import type { Records } from '../stores.ts'
import { postgresStores } from './stores.ts'
import { DatabaseUnavailable, type Changes } from '../records.ts'
import { migratePostgres, requireCurrentPostgres } from './migrate.ts'
import { postgresRecords } from './records.ts'
import { listenForChanges, type ChangeFeed } from './change-feed.ts'
import { shownPostgresUrl } from './url.ts'
import { behindPooler, PoolerWithoutDirectUrl, requireDirect } from './pooler.ts'
import { replicaRouting } from './replicas.ts'

/** Seconds to wait for a connection before a statement fails: long enough for a restart, short of a client's patience. */
const CONNECT_TIMEOUT_S = 10

/**
 * `application`: the name its connections show in pg_stat_activity (what each one is for), unless the URL gives
 * one (`?application_name=`). Each connection also says which instance it serves (`trellis.instance`, a new id per
 * opening), which names its writes in the change feed; `listen` (a server) hears the other instances' writes.
 * `directUrl`: `url` goes through a transaction pooler, and this one does not (pooler.ts): the pool then prepares
 * nothing by name and names its instance in each transaction, and the connections that need a session (the change
 * feed, the leases, the migrations) go direct. Without it, a pooler found at `url` is refused (one line).
 * `replicaUrls`: streaming replicas of that database, each with a pool of `pool` (`<application> replica`) for the
 * reads they may serve (replicas.ts); one out of reach at start is not read until it answers. With a pooled database
 * URL they are taken as pooled too (nothing prepared by name).
 */
export async function openPostgresRecords(
  url: string,
  mode: OpenMode,
  pool: number,
  application = 'trellis',
  options: { listen?: boolean; directUrl?: string | null; replicaUrls?: string[]; replicaMaxLagS?: number } = {},
): Promise<Records> {
  const where = shownPostgresUrl(url)
  const named = new URL(url).searchParams.has('application_name')
  const instance = randomUUID()
  const direct = options.directUrl ?? null
  const pooled = direct !== null
  // A pooler passes application_name on (PgBouncer tracks it per client), never a parameter of Trellis's own.
  const connection = (name: string) => ({
    ...(named ? {} : { application_name: name }),
    ...(pooled ? {} : { 'trellis.instance': instance }),
  })
  const session = direct ?? url
  const sql = new SQL(url, {
    max: pool,
    connectionTimeout: CONNECT_TIMEOUT_S,
    idleTimeout: 60,
    prepare: !pooled,
    connection: connection(application),
  })
  let feed: ChangeFeed | null = null
  try {
    if (pooled) await Promise.all([sql.unsafe('SELECT 1'), requireDirect(session, instance, CONNECT_TIMEOUT_S)])
    else if (await behindPooler(sql, url, instance, CONNECT_TIMEOUT_S)) throw new PoolerWithoutDirectUrl()
    if (mode === 'migrate') await migrateDirect(session, pooled ? null : sql, where)
    else if (mode === 'current') await requireCurrentPostgres(sql, where)
    if (options.listen) {
      const client = new SQL(session, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S, connection: connection(`${application} changes`) })
      feed = await listenForChanges(client, instance).catch(async (error) => {
        await client.close().catch(() => {})
        throw error
      })
    }
  } catch (error) {
    await sql.close().catch(() => {})
    if (error instanceof SchemaMismatch) throw error
    if (error instanceof PoolerWithoutDirectUrl) throw new DatabaseUnavailable(error.message)
    throw new DatabaseUnavailable(`cannot use PostgreSQL at ${where}: ${reasonOf(error)}`)
  }
  const leaseClient = () =>
    new SQL(session, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S, idleTimeout: 60, connection: connection(`${application} leases`) })
  const replicaUrls = options.replicaUrls ?? []
  const openReplica = (replica: string) =>
    new SQL(replica, {
      max: pool,
      connectionTimeout: CONNECT_TIMEOUT_S,
      idleTimeout: 60,
      prepare: !pooled, // behind a pooler as the primary is, most likely
      connection: new URL(replica).searchParams.has('application_name') ? {} : { application_name: `${application} replica` },
    })
  const replicas =
    replicaUrls.length === 0
      ? undefined
      : (changes: Changes) => replicaRouting(sql, replicaUrls, { maxLagS: options.replicaMaxLagS ?? 5, changes, open: openReplica })
  return postgresRecords(sql, postgresStores, { feed, instance, leaseClient, tagged: pooled, replicas })
}

/** Migrations hold a session lock: on `sql` when direct, else on a connection of their own to `session`, closed after. */
async function migrateDirect(session: string, sql: SQL | null, where: string): Promise<void> {
  if (sql) {
    await migratePostgres(sql, where)
    return
  }
  const client = new SQL(session, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S })
  try {
    await migratePostgres(client, where)
  } finally {
    await client.close().catch(() => {})
  }
}

/** What went wrong, in PostgreSQL's words where it gave some (they never hold the password). */
function reasonOf(error: unknown): string {
  const { message, code, errno } = (error ?? {}) as { message?: string; code?: string; errno?: string }
  if (errno === '28P01') return 'password authentication failed'
  if (errno === '3D000') return 'the database does not exist (create it first: createdb, or CREATE DATABASE)'
  if (code === 'ERR_POSTGRES_CONNECTION_REFUSED' || code === 'ECONNREFUSED' || /ECONNREFUSED|connection refused/i.test(message ?? ''))
    return 'connection refused (is PostgreSQL running, and listening there?)'
  if (code === 'ERR_POSTGRES_CONNECTION_TIMEOUT') return `no answer within ${CONNECT_TIMEOUT_S} s`
  return (message ?? String(error)).split('\n', 1)[0]!
}
