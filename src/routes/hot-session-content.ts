// A paid entry's small content read with a browser session (its owner, or a past buyer, in a browser), answered from
// the hot route as Elysia's route answers it: the session known without verifying its token again (live-sessions),
// whether the wallet bought the entry from the read memo (kept until the records next change, as every memoized read),
// and the opened bytes and headers prepared once per entry. Whatever is not known yet is Elysia's this time, and is
// looked up meanwhile for the next request.
import type { Services } from './services.ts'
import type { EntryRecord } from '../models/records.ts'
import type { Prepared } from '../edge/request-wrapper.ts'
import { heldContent } from './serve-content.ts'

/** Paid bytes up to this size are kept opened for the hot route; larger ones stream from Elysia's. */
const HELD_BYTES = 64 * 1024
const PRIVATE = 'private, max-age=300'

/** `compute`d into the memo for the next request; this one is Elysia's. */
function later(
  s: Services,
  key: string,
  compute: (staleFrom: (at: number) => void) => Promise<unknown>,
  size: (value: never) => number,
): null {
  void s.cached.get(key, compute, size as (value: unknown) => number).catch(() => {})
  return null
}

/**
 * The answer to `token`'s session reading `entry`'s bytes (a paid entry of the feed `ownerLc` owns), or null: Elysia
 * answers (a session unknown, expired or ended; a wallet that must pay; content too large; not known yet).
 */
export function sessionContent(s: Services) {
  return (token: string, entry: EntryRecord, ownerLc: string): Prepared<Uint8Array<ArrayBuffer>> | null => {
    const address = s.auth.sessionAddressNow(token)
    if (!address) return null
    const wallet = address.toLowerCase()
    if (wallet !== ownerLc) {
      // Kept until the records change, or the pass that lets it read ends.
      const key = `entitled:${wallet}:${entry.id}`
      const bought = s.cached.peek<boolean>(key)
      if (bought === undefined)
        return later(
          s,
          key,
          (staleFrom) => s.purchases.entitled(wallet, entry, staleFrom),
          () => 64,
        )
      if (!bought) return null
    }
    const key = `paid-bytes:${entry.id}`
    const bytes = s.cached.peek<Prepared<Uint8Array<ArrayBuffer>> | null>(key)
    if (bytes === undefined)
      return later(
        s,
        key,
        async () => heldContent(s.content, await s.entries.servable(entry), { cacheControl: PRIVATE, maxBytes: HELD_BYTES, sealed: true }),
        (held: Prepared<Uint8Array<ArrayBuffer>> | null) => 2_000 + (held?.body.byteLength ?? 0),
      )
    return bytes
  }
}
