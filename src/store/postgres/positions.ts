// Read-your-writes across instances (docs/scale-out.md, "Reading your own writes"): the version a write's answer
// carries, and how an instance asked for it knows whether its read memo is fresh enough.
//
// The version is the database's WAL insert position, read (pg_current_wal_insert_lsn()) after the request's commits:
// a value PostgreSQL makes monotone in commit order. A sequence would not be (T1 draws 5, T2 draws 6, T2 commits
// first: having heard 6 says nothing of 5), nor is the per-instance counter of the change feed. Why hearing a position
// P on the change feed means every commit whose record ends at or before P was heard:
// - a transaction that notifies queues its notices before it writes its commit record (PreCommit_Notify runs before
//   RecordTransactionCommit), under a lock every notifying commit takes until it ends: the queue is in commit order;
// - the statement that tells P (`pg_notify('trellis_changes', 'at:' || pg_current_wal_insert_lsn())`) reads P before
//   its own commit queues that notice; a commit record ending at or before P was reserved before P was read, so its
//   transaction's notices are ahead in the queue;
// - a listener is delivered the queue in order, each entry once its transaction has ended (its rows visible).
// So an instance keeps one number, the greatest position heard, and a version V is heard once V <= it. V was read
// after the write committed, so V is at or past the end of the write's commit record (asynchronous commits too: it is
// the insert position, not the flushed one). Nothing per client, no set of versions, and a re-made listener keeps it
// (what was heard was heard; its memo is dropped on re-subscribing anyway).
//
// The statement that reads V tells it (one `at:V` notice, queued behind the write's own): it reaches the other
// instances about when the answer reaches the client, so a next request is rarely kept waiting. An instance asked for
// a version beyond what it heard waits for a position at or past it; after PROBE_AFTER_MS it reads (and tells) the
// position itself, which tells a version never written (forged, or another database's: past the position read after
// the request came) from one not heard yet; the first is ignored. The caller bounds the wait; past it, it reads fresh.
// A replica can be asked of the same version: it has the write once pg_last_wal_replay_lsn() >= V.
import type { SQL } from 'bun'
import type { Reached } from '../records.ts'
import { CHANGES_CHANNEL, POSITION_PREFIX, type ChangeFeed } from './change-feed.ts'

/** How long a version not heard yet is waited for before asking the database where it is. */
export const PROBE_AFTER_MS = 10
const POSITION = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i

/** A WAL position as PostgreSQL spells it (`16/B374D848`), as a number; null when it is not one. */
export function positionOf(text: string): bigint | null {
  const m = POSITION.exec(text)
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : null
}

export interface Positions {
  version(): Promise<string>
  reach(version: string, withinMs: number): Reached | Promise<Reached>
}

interface Waiter {
  wanted: bigint
  done(reached: Reached): void
}

/** Positions read through `sql` (a pool: through a pooler too) and heard through `feed` (null: nothing is heard). */
export function feedPositions(sql: SQL, feed: ChangeFeed | null, clock: () => number = performance.now.bind(performance)): Positions {
  let heard = 0n
  const waiting = new Set<Waiter>()
  /** The latest reading of the position: one shared by the requests that came before it was asked. */
  let latest: { askedAt: number; position: Promise<bigint> } | null = null

  feed?.hearPositions((text) => {
    const position = positionOf(text)
    if (position === null || position <= heard) return
    heard = position
    for (const waiter of waiting) if (waiter.wanted <= heard) waiter.done('heard')
  })

  /**
   * The position now, told to every instance (this one too). A notice takes a transaction id, so its commit is
   * written: committed asynchronously (no wait for the WAL's flush), as nothing is lost if a crash forgets it.
   */
  async function tell(): Promise<string> {
    const [row] = await sql.unsafe(
      "SELECT p::text AS position, set_config('synchronous_commit', 'off', true) AS lazily, pg_notify($1, $2 || p::text) AS told " +
        'FROM (SELECT pg_current_wal_insert_lsn() AS p) AS now',
      [CHANGES_CHANNEL, POSITION_PREFIX],
    )
    return row.position as string
  }

  /** The position read after `since`: the latest reading if it was asked since, else a new one. */
  function readSince(since: number): Promise<bigint> {
    if (latest === null || latest.askedAt < since) latest = { askedAt: clock(), position: tell().then((text) => positionOf(text)!) }
    return latest.position
  }

  return {
    version: tell,
    reach(version, withinMs) {
      const wanted = positionOf(version)
      if (wanted === null) return 'ignored'
      if (wanted <= heard) return 'heard'
      // Deaf (a lost listener, or records that do not listen): the memo keeps nothing then, and waiting hears nothing.
      if (!feed?.changes.live()) return 'behind'
      const since = clock()
      return new Promise<Reached>((resolve) => {
        const waiter: Waiter = {
          wanted,
          done(reached) {
            if (!waiting.delete(waiter)) return
            clearTimeout(giveUp)
            clearTimeout(probe)
            resolve(reached)
          },
        }
        waiting.add(waiter)
        const giveUp = setTimeout(() => waiter.done('behind'), withinMs)
        // A failed reading changes nothing: the wait ends as it would have.
        const probe = setTimeout(
          () =>
            readSince(since).then(
              (now) => wanted > now && waiter.done('ignored'),
              () => {},
            ),
          Math.min(PROBE_AFTER_MS, withinMs),
        )
      })
    },
  }
}
