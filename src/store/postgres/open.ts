// Opening the records in PostgreSQL: a pool of Bun's built-in SQL client, reached and (for the server and the data
// commands) migrated before anything is served, so an unreachable database, a wrong password or a missing database
// is one line at start, naming the URL without its password.
import { SQL } from 'bun'
import { randomUUID } from 'node:crypto'
import type { OpenMode } from '../sqlite/database.ts'
import { SchemaMismatch } from '../migrations/index.ts'
import type { Records } from '../stores.ts'
import { postgresStores } from './stores.ts'
import { DatabaseUnavailable } from '../records.ts'
import { migratePostgres, requireCurrentPostgres } from './migrate.ts'
import { postgresRecords } from './records.ts'
import { listenForChanges, type ChangeFeed } from './change-feed.ts'
import { shownPostgresUrl } from './url.ts'

/** Seconds to wait for a connection before a statement fails: long enough for a restart, short of a client's patience. */
const CONNECT_TIMEOUT_S = 10

/**
 * `application`: the name its connections show in pg_stat_activity (what each one is for), unless the URL gives
 * one (`?application_name=`). Each connection also says which instance it serves (`trellis.instance`, a new id per
 * opening), which names its writes in the change feed; `listen` (a server) hears the other instances' writes.
 */
export async function openPostgresRecords(
  url: string,
  mode: OpenMode,
  pool: number,
  application = 'trellis',
  options: { listen?: boolean } = {},
): Promise<Records> {
  const where = shownPostgresUrl(url)
  const named = new URL(url).searchParams.has('application_name')
  const instance = randomUUID()
  const connection = (name: string) => ({ ...(named ? {} : { application_name: name }), 'trellis.instance': instance })
  const sql = new SQL(url, { max: pool, connectionTimeout: CONNECT_TIMEOUT_S, idleTimeout: 60, connection: connection(application) })
  let feed: ChangeFeed | null = null
  try {
    await sql.unsafe('SELECT 1')
    if (mode === 'migrate') await migratePostgres(sql, where)
    else if (mode === 'current') await requireCurrentPostgres(sql, where)
    if (options.listen) {
      const client = new SQL(url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S, connection: connection(`${application} changes`) })
      feed = await listenForChanges(client, instance).catch(async (error) => {
        await client.close().catch(() => {})
        throw error
      })
    }
  } catch (error) {
    await sql.close().catch(() => {})
    if (error instanceof SchemaMismatch) throw error
    throw new DatabaseUnavailable(`cannot use PostgreSQL at ${where}: ${reasonOf(error)}`)
  }
  const leaseClient = () =>
    new SQL(url, { max: 1, connectionTimeout: CONNECT_TIMEOUT_S, idleTimeout: 60, connection: connection(`${application} leases`) })
  return postgresRecords(sql, postgresStores, { feed, instance, leaseClient })
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
