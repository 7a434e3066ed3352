// A transaction pooler (PgBouncer's pool_mode=transaction) between Trellis and PostgreSQL: what it breaks, and how
// it is found. Through one, consecutive statements of one client may run on different server sessions, and one
// session serves many clients in turn, so nothing that outlives a transaction holds: a named prepared statement
// (another client's "P0" is already there: 42P05), a LISTEN (heard by whichever client holds the session then,
// usually none), a session advisory lock (two instances both "lead"), a startup parameter (PgBouncer 1.18 refuses
// any it does not track: 08P01 "unsupported startup parameter"). So through a pooler the pool runs without named
// statements, names its instance per transaction (set_config(…, true)), and all that needs a session (the change
// feed, the leases, the migrations' lock) goes to TRELLIS_DATABASE_DIRECT_URL.
//
// Told: a direct URL given means the database URL is pooled. Not told, a pooler is found before anything else runs,
// by what PostgreSQL alone never does (each probe measured against PgBouncer 1.18, docs/postgresql.md):
// - a startup parameter refused (PgBouncer, any pool mode), or not reaching the server (a pooler dropping it);
// - two open clients answered by one backend, one after the other (same pg_backend_pid and postmaster start): a
//   session shared by clients, which only a transaction (or statement) pooler does. PgBouncer hands the session
//   just released to the next client (LIFO), so an idle pooler shows it every time (20 of 20 probes; direct: 0).
import { SQL } from 'bun'

export const POOLER_REFUSAL =
  'TRELLIS_DATABASE_URL goes through a transaction pooler (PgBouncer): set TRELLIS_DATABASE_DIRECT_URL to a direct ' +
  'connection for the change feed and the leases'

export const DIRECT_POOLED_REFUSAL =
  'TRELLIS_DATABASE_DIRECT_URL goes through a pooler too: set it to PostgreSQL itself (the change feed and the leases ' +
  'need sessions of their own)'

/** The probe's refusal, thrown at open: its message is the one line the operator reads. */
export class PoolerWithoutDirectUrl extends Error {
  constructor(message = POOLER_REFUSAL) {
    super(message)
  }
}

/** Refuses a "direct" URL that is not: one connection to it for the probe, closed after (the feed's come later). */
export async function requireDirect(direct: string, instance: string, timeoutS: number): Promise<void> {
  const client = new SQL(direct, { max: 1, connectionTimeout: timeoutS, connection: { 'trellis.instance': instance } })
  try {
    if (await behindPooler(client, direct, instance, timeoutS)) throw new PoolerWithoutDirectUrl(DIRECT_POOLED_REFUSAL)
  } finally {
    await client.close().catch(() => {})
  }
}

/** Whether `error` is PgBouncer refusing a startup parameter it does not know (it names the parameter). */
export const refusedStartupParameter = (error: unknown): boolean => {
  const { errno, message } = (error ?? {}) as { errno?: string; message?: string }
  return errno === '08P01' && /unsupported startup parameter/i.test(message ?? '')
}

/**
 * Through `sql` (a pool whose connections set `trellis.instance` to `instance` at start): whether a pooler sits
 * between. Its first statement is the one the pool would run anyway; the second client costs one connection, once.
 */
export async function behindPooler(sql: SQL, url: string, instance: string, timeoutS: number): Promise<boolean> {
  let seen: string | null
  try {
    seen = (await sql.unsafe("SELECT current_setting('trellis.instance', true) AS seen"))[0].seen
  } catch (error) {
    if (refusedStartupParameter(error)) return true
    throw error
  }
  if (seen !== instance) return true
  const other = new SQL(url, { max: 1, prepare: false, connectionTimeout: timeoutS })
  try {
    const backend = 'SELECT pg_backend_pid() AS pid, pg_postmaster_start_time()::text AS since'
    const [mine] = await sql.unsafe(backend)
    const [theirs] = await other.unsafe(backend)
    return mine.pid === theirs.pid && mine.since === theirs.since
  } finally {
    await other.close().catch(() => {})
  }
}
