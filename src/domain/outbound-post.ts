// What the webhook sender (webhooks.ts) and WebSub's distribution (websub-distribution.ts) share: each sends what an
// outbox holds as POSTs to URLs a stranger chose, so each checks a URL before taking it (public addresses only, then
// again at every request: DNS may change), claims a row before sending it (no two senders send one row at once),
// keeps its POSTs in flight to one per target in two pools (targets in good standing, and those whose last POST
// failed), and after a failure rests the target and tries again on Standard Webhooks' schedule, for a day. What each
// sends, and how it signs it, is its own.
import { PublicFetchFailed, requestPublic, timeLimit, vettedAddresses } from '../lib/public-fetch.ts'
import { nowSeconds } from '../lib/clock.ts'

/** Seconds after each failed attempt before the next (Standard Webhooks' schedule), the last repeated. */
const RETRY_AFTER_S = [5, 300, 1_800, 7_200, 18_000, 36_000]
/** What is owed with no 2xx this long after it was written is given up. */
const GIVE_UP_S = 86_400
/** How long a sender holds a row it is sending: due again after this only if that sender died. */
export const CLAIM_S = 60
/** A POST unanswered this long counts among the failing targets' from then on (it goes on to its timeout). */
const SLOW_AFTER_MS = 2_000

export interface Retries {
  afterS: number[]
  giveUpS: number
}

/** The URL `raw` when it is one of `protocols`, without user:password, of a host that resolves to public addresses only. */
export async function publicTarget(raw: string, protocols: string[], allowPrivate: boolean, timeoutMs: number): Promise<URL | null> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return null
  }
  if (!protocols.includes(url.protocol) || url.username || url.password || !url.hostname) return null
  try {
    await vettedAddresses(url.hostname, allowPrivate, timeLimit(timeoutMs).deadline)
  } catch (error) {
    if (error instanceof PublicFetchFailed) return null
    throw error
  }
  return url
}

/** A POST's answer: its status (the body is not read), or why there was none. */
export type Posted = { status: number; failure?: undefined } | { status: null; failure: unknown }

export const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300

/** One POST to a public address (the SSRF guard of lib/public-fetch.ts), given up after `timeoutS`. */
export async function postPublic(
  url: string,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
  timeoutS: number,
): Promise<Posted> {
  try {
    const response = await requestPublic(new URL(url), { method: 'POST', headers, body }, allowPrivate, timeoutS * 1000)
    await response.body?.cancel().catch(() => {})
    return { status: response.status }
  } catch (failure) {
    return { status: null, failure }
  }
}

type Pool = 'good' | 'failing'
/** A POST one waits for (a test an owner asked for), outside the pools: counted in the total and against its key only. */
type Held = Pool | 'aside'

/**
 * The in-flight bookkeeping and retry schedule of one sender: at most `slots[pool]` POSTs in each pool (and `total`
 * in all, when given), one per target (a key: an endpoint, a subscription).
 */
export function outboundSender(slots: Record<Pool, number>, retries: Retries | null | undefined, total = Number.POSITIVE_INFINITY) {
  const retryAfter = retries?.afterS ?? RETRY_AFTER_S
  const giveUpS = retries?.giveUpS ?? GIVE_UP_S
  /** Targets with a POST in flight: the pool it started in, and when. */
  const inFlight = new Map<string, { pool: Held; since: number }>()
  const poolOf = (a: { pool: Held; since: number }): Held =>
    a.pool === 'aside' ? 'aside' : a.pool === 'good' && performance.now() - a.since < SLOW_AFTER_MS ? 'good' : 'failing'
  const held = (pool: Held) => [...inFlight.values()].filter((a) => poolOf(a) === pool).length
  const after = (count: number) => retryAfter[Math.min(count, retryAfter.length - 1)]!

  return {
    giveUpS,
    /** The targets with a POST in flight. */
    busy: () => [...inFlight.keys()],
    has: (key: string) => inFlight.has(key),

    /** `start` for each pool with room (good first), told how much; how many it started in all. */
    async eachPool(start: (pool: Pool, room: number) => Promise<number>): Promise<number> {
      let started = 0
      for (const pool of ['good', 'failing'] as const) {
        const room = Math.min(slots[pool] - held(pool), total - inFlight.size)
        if (room > 0) started += await start(pool, room)
      }
      return started
    },

    /**
     * Claims (`claim` answers whether this sender got the row) and starts `send` for `key` in `pool`, without waiting
     * for it; `unrecorded` hears what it threw. False when the target is busy or the claim was lost.
     */
    async launch(key: string, pool: Pool, claim: () => Promise<boolean>, send: () => Promise<void>, unrecorded: (error: unknown) => void) {
      if (inFlight.has(key) || !(await claim())) return false
      inFlight.set(key, { pool, since: performance.now() })
      void send()
        .catch(unrecorded)
        .finally(() => inFlight.delete(key))
      return true
    },

    /**
     * Runs `send` for `key` now and waits for it, outside the pools: refused ('busy') while `key` has a POST in flight,
     * and ('full') when `most` such POSTs, or the total, are in flight already.
     */
    async aside<T>(key: string, most: number, send: () => Promise<T>): Promise<{ done: T } | { refused: 'busy' | 'full' }> {
      if (inFlight.has(key)) return { refused: 'busy' }
      if (held('aside') >= most || inFlight.size >= total) return { refused: 'full' }
      inFlight.set(key, { pool: 'aside', since: performance.now() })
      try {
        return { done: await send() }
      } finally {
        inFlight.delete(key)
      }
    },

    /**
     * After a failed POST at `now`: until when the target rests (as long as its next try would wait, longer at each
     * failure in a row), when the row is due again, and whether it is given up (a day after it was written).
     */
    afterFailure(now: number, row: { attempts: number; failures: number; created_at: number }) {
      const restUntil = nowSeconds() + after(row.failures)
      const next = now + after(row.attempts)
      return { restUntil, next, givenUp: next - row.created_at >= giveUpS }
    },
  }
}
