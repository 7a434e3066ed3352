// What one request may read, for read-your-writes across instances (docs/scale-out.md, "Reading your own writes"):
// the version it carried (a database position, edge/read-your-writes.ts) and whether this instance could confirm in
// time that it heard every commit up to it. Kept per request in AsyncLocalStorage by the request wrapper; read by the
// read memo (store/memo.ts: a request that must read fresh neither reads nor keeps what it holds) and by whatever
// chooses where a read goes: a request for which `mustReadFresh()` is true reads the primary, never a replica and
// never a kept copy; one that carries a version (`readVersion()`) may read a replica that replayed past it.
import { AsyncLocalStorage } from 'node:async_hooks'

export interface RequestReads {
  /** The version the request carried, as PostgreSQL spells a WAL position (`16/B374D848`); null when none (or ignored). */
  readonly version: string | null
  /** This instance could not confirm within the wait that it heard every commit up to `version`: read the primary. */
  readonly fresh: boolean
  /** The request committed records whose reads instances keep (store/postgres/records.ts, a sign-out): its answer names a version. */
  wrote: boolean
}

const reads = new AsyncLocalStorage<RequestReads>()
/** Requests under way that must read fresh: while there are none, `mustReadFresh()` is one comparison. */
let freshUnderWay = 0

/**
 * True inside a request that must read from the primary database, bypassing the read memo (and any replica): it
 * carried a version this instance had not heard of through its change feed within the wait. The one flag a read
 * router asks.
 */
export function mustReadFresh(): boolean {
  return freshUnderWay > 0 && reads.getStore()?.fresh === true
}

/** The version the current request carried and this instance took (null: none); a replica must have replayed past it. */
export function readVersion(): string | null {
  return reads.getStore()?.version ?? null
}

/** The records committed a write the memo keeps, in the current request (if any): its answer will carry a version. */
export function wroteRecords(): void {
  const state = reads.getStore()
  if (state) state.wrote = true
}

/** Runs `work` (and what it awaits) as a request reading as `state` says. */
export function readingAs<T>(state: RequestReads, work: () => T): T {
  if (!state.fresh) return reads.run(state, work)
  freshUnderWay++
  let result: T
  try {
    result = reads.run(state, work)
  } catch (error) {
    freshUnderWay--
    throw error
  }
  if (result instanceof Promise) return result.finally(() => freshUnderWay--) as T
  freshUnderWay--
  return result
}
