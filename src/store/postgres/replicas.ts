// Read replicas: streaming standbys of the records' database (TRELLIS_DATABASE_REPLICA_URL) that serve the reads the
// domain marks as reads (`records.reads`, `records.snapshot`): lists, pages, boards, statistics. Every write, and all
// a transaction reads, stays on the primary.
//
// One predicate, `pick`, decides per read whether a replica serves it: one that is in use (reachable, a standby, at
// most TRELLIS_REPLICA_MAX_LAG_S behind) and known to have replayed every change this process has heard of (its own
// commits, and through the change feed the other instances'), outside `onPrimary`. The second rule keeps the read
// memo's promise: a list kept until the next change must not be an older one than the primary would give, and it
// makes a client's read after its own write (here, or once this instance heard of it) fresh. "Known to have replayed"
// is measured by positions in the WAL: the primary's insert position sampled at t0, the replica's replay position
// after; at or past it, the replica holds every commit made before t0 (`caughtUpAt`). A change heard asks again after
// SOON_MS (then backing off to CHECK_MS), so a replica that keeps up serves again a few milliseconds after a write;
// between, the primary does.
//
// Lag: 0 when caught up, else an upper bound: the smaller of the time since it was last caught up and the time since
// the newest transaction it replayed (pg_last_xact_replay_timestamp, which only counts while WAL is pending). A replica
// out of reach (a statement on it fails with a lost connection, or a check does not answer within CHECK_TIMEOUT_MS)
// is dropped at once, and the reads under way on it run on the primary; a replica that is no standby (promoted) is
// never read.
import type { SQL } from 'bun'
import { readsFromPrimary, type Changes, type ReadReplicas, type ReplicaStatus } from '../records.ts'
import { mustReadFresh } from '../../lib/fresh-reads.ts'
import type { Query, Sql } from '../query.ts'
import { postgresSql } from './sql.ts'
import { isConnectionLoss } from './faults.ts'

/** How often every replica is checked. */
const CHECK_MS = 1000
/** After a change is heard: how soon the replicas are asked whether they replayed it (then 2×, 4×… up to CHECK_MS). */
const SOON_MS = 10
/** The primary's insert position, with every commit before it flushed (see round()). */
const FLUSHED_POSITION =
  "SELECT p::text AS position, CASE WHEN pg_current_wal_flush_lsn() < p THEN pg_logical_emit_message(true, 'trellis', 'flush') END " +
  'AS flushed FROM (SELECT pg_current_wal_insert_lsn() AS p) AS now'
/** A check unanswered this long finds the replica out of reach. */
const CHECK_TIMEOUT_MS = 2000

interface Replica {
  name: string
  sql: SQL
  statements: Sql
  inUse: boolean
  /** performance.now() when the primary was at a position this replica has since replayed; -Infinity: not yet known. */
  caughtUpAt: number
  lagS: number
  /** Reads under way on it: abandoned (run on the primary instead) when it is found out of reach. */
  reading: Set<(error: Error) => void>
}

export interface ReplicaRouting {
  /** The predicate: the replica that may serve a read now, or null for the primary. */
  pick(): Replica | null
  /** Statements that `pick` routes, each on its own; a failure on a replica runs it on `primary` again. */
  routed(primary: Sql): Sql
  /** `work` in one REPEATABLE READ READ ONLY transaction, on a replica if `pick` gives one, else through `primary`. */
  snapshot<T>(work: (sql: SQL) => Promise<T>, primary: () => Promise<T>): Promise<T>
  readonly replicas: ReadReplicas
  close(): Promise<void>
}

/** The replica's label: host and port only (its user, password and database stay out of /metrics and the log). */
export function replicaName(url: string): string {
  try {
    return new URL(url).host || 'a local socket'
  } catch {
    return 'an unparsable URL'
  }
}

/**
 * Pools of `pool` connections to each of `urls` (`open` makes each), checked against `primary` at once and every
 * CHECK_MS (timers unref'd), and soon after each change `changes` tells of.
 */
export function replicaRouting(
  primary: SQL,
  urls: string[],
  { maxLagS, changes, open }: { maxLagS: number; changes: Pick<Changes, 'live' | 'onChange'>; open: (url: string) => SQL },
): ReplicaRouting {
  const openedAt = performance.now()
  const seen = new Map<string, number>()
  const replicas: Replica[] = urls.map((url) => {
    const host = replicaName(url)
    const n = (seen.get(host) ?? 0) + 1
    seen.set(host, n)
    const sql = open(url)
    return {
      name: n > 1 ? `${host}#${n}` : host,
      sql,
      statements: postgresSql(sql),
      inUse: false,
      caughtUpAt: -Infinity,
      lagS: 0,
      reading: new Set(),
    }
  })
  const listeners = new Set<(status: ReplicaStatus, reason: string) => void>()
  const statusOf = (r: Replica): ReplicaStatus => ({ replica: r.name, inUse: r.inUse, lagS: r.lagS })
  const switchTo = (r: Replica, inUse: boolean, reason: string) => {
    if (r.inUse === inUse) return
    r.inUse = inUse
    for (const listener of listeners) listener(statusOf(r), reason)
  }
  /** The time since it was last known caught up (or since opening): an upper bound of its lag. */
  const sinceCaughtUp = (r: Replica) => (performance.now() - (Number.isFinite(r.caughtUpAt) ? r.caughtUpAt : openedAt)) / 1000
  /** Behind: the smaller of the two upper bounds it has (the time since opening only when it has neither). */
  const behind = (r: Replica, sinceReplayed: number | null) => {
    const bound = Math.min(Number.isFinite(r.caughtUpAt) ? sinceCaughtUp(r) : Infinity, sinceReplayed ?? Infinity)
    return Math.max(0, Number.isFinite(bound) ? bound : sinceCaughtUp(r))
  }

  let lastChangeAt = -Infinity
  let next = 0
  function pick(): Replica | null {
    // A request carrying a version this instance has not heard of (read-your-writes) reads the primary too.
    if (readsFromPrimary() || mustReadFresh() || !changes.live()) return null
    for (let i = 0; i < replicas.length; i++) {
      const r = replicas[(next + i) % replicas.length]!
      if (r.inUse && r.caughtUpAt >= lastChangeAt) {
        next = (next + i + 1) % replicas.length
        return r
      }
    }
    return null
  }

  async function checkOne(r: Replica, position: string, t0: number): Promise<void> {
    let timer: Timer | undefined
    try {
      const answer = r.sql.unsafe(
        'SELECT pg_is_in_recovery() AS standby, COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) AS caught, ' +
          'EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8 AS since',
        [position],
      )
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)
      })
      const [row] = (await Promise.race([answer, late])) as Array<{ standby: boolean; caught: boolean; since: number | null }>
      if (!row!.standby) {
        r.lagS = 0
        return switchTo(r, false, 'it is not a standby (promoted?): never read')
      }
      if (row!.caught) r.caughtUpAt = Math.max(r.caughtUpAt, t0)
      r.lagS = row!.caught ? 0 : behind(r, row!.since)
      if (r.lagS > maxLagS) switchTo(r, false, `${r.lagS.toFixed(1)} s behind the primary (bound ${maxLagS} s)`)
      else if (Number.isFinite(r.caughtUpAt)) switchTo(r, true, r.lagS === 0 ? 'caught up' : `${r.lagS.toFixed(1)} s behind`)
    } catch (error) {
      lost(r, error)
    } finally {
      clearTimeout(timer)
    }
  }

  function lost(r: Replica, error: unknown) {
    r.lagS = sinceCaughtUp(r)
    const reason = `out of reach: ${String((error as Error)?.message ?? error).split('\n', 1)[0]}`
    switchTo(r, false, reason)
    // A replica that hangs (no answer, no closed connection) would hold these until TCP gives up.
    for (const abandon of r.reading) abandon(new Error(reason))
    r.reading.clear()
  }

  /** One round: the primary's position first, then every replica against it. A primary out of reach changes nothing. */
  async function round(): Promise<void> {
    const t0 = performance.now()
    let position: string
    try {
      // A replica receives only flushed WAL, and asynchronous commits (an entry's, a notice) wait in the primary's
      // buffers for up to three wal_writer_delay: with some pending, a message logged in a transaction of its own
      // (which has WAL, so its commit is flushed) flushes them at once. Any role may log one; a standby ignores it.
      position = (await primary.unsafe(FLUSHED_POSITION))[0].position
    } catch {
      return
    }
    await Promise.all(replicas.map((r) => checkOne(r, position, t0)))
  }

  let running: Promise<void> | null = null
  let soon: Timer | null = null
  let delay = SOON_MS
  let closed = false
  function check(): Promise<void> {
    running ??= round().finally(() => {
      running = null
      // Still behind a change heard: ask again soon, backing off.
      if (!closed && replicas.some((r) => r.inUse && r.caughtUpAt < lastChangeAt)) checkSoon(Math.min(delay * 2, CHECK_MS))
    })
    return running
  }
  function checkSoon(after = SOON_MS) {
    delay = after
    if (soon || closed) return
    soon = setTimeout(() => {
      soon = null
      if (running) void running.then(() => checkSoon(delay))
      else void check()
    }, after)
    soon.unref()
  }
  const unlisten = changes.onChange(() => {
    lastChangeAt = performance.now()
    checkSoon()
  })
  const every = setInterval(() => void check(), CHECK_MS)
  every.unref()
  void check()

  /** A failure on a replica: a lost connection drops it now (the next check may take it back). */
  function failed(r: Replica, error: unknown) {
    const cause = (error as { cause?: unknown })?.cause ?? error
    if (isConnectionLoss(cause) || isConnectionLoss(error)) {
      lost(r, cause)
      checkSoon()
    }
  }

  async function via<T>(primaryWork: () => Promise<T>, work: (r: Replica) => Promise<T>): Promise<T> {
    const r = pick()
    if (!r) return primaryWork()
    try {
      return await new Promise<T>((resolve, reject) => {
        r.reading.add(reject)
        work(r)
          .then(resolve, reject)
          .finally(() => r.reading.delete(reject))
      })
    } catch (error) {
      failed(r, error)
      return primaryWork()
    }
  }

  return {
    pick,
    routed: (primarySql) => ({
      all: <T>(query: Query) =>
        via(
          () => primarySql.all<T>(query),
          (r) => r.statements.all<T>(query),
        ),
      get: <T>(query: Query) =>
        via(
          () => primarySql.get<T>(query),
          (r) => r.statements.get<T>(query),
        ),
      run: (query: Query) =>
        via(
          () => primarySql.run(query),
          (r) => r.statements.run(query),
        ),
    }),
    snapshot: (work, onPrimary) =>
      via(onPrimary, (r) => r.sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => work(tx)) as ReturnType<typeof work>),
    replicas: {
      status: () => replicas.map(statusOf),
      onSwitch(listener) {
        listeners.add(listener)
        return () => listeners.delete(listener)
      },
    },
    async close() {
      closed = true
      unlisten()
      clearInterval(every)
      if (soon) clearTimeout(soon)
      await running?.catch(() => {})
      await Promise.all(replicas.map((r) => r.sql.close().catch(() => {})))
    },
  }
}
