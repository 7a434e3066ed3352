// The rate limits of instances sharing one database: a window per client and bucket is counted in the database, and
// each instance leases tokens of it (Cluster.leaseRate: one statement) and spends them locally, so the limit holds
// across instances and a request mostly costs no statement. A lease asks for an eighth of what it last saw left (1 to
// 10): leases shrink as a window fills, so few tokens are left unspent on another instance. Requests that find no
// token while a lease is under way wait for that one lease. A spent window is refused locally until it ends: a flood
// costs the database nothing. While the database cannot lease, each instance counts alone (rate-limit.ts), so a
// client gets at most the limit per instance meanwhile.
import type { Cluster } from '../store/records.ts'
import { clientKeyer, decided, rateLimiter, ruleFor, type Limit, type RateLimiter, type Rule } from './rate-limit.ts'

const MAX_KEYS = 100_000
const SWEEP_EVERY_S = 10
/** After a failed lease, how long the instance counts alone before it asks the database again. */
const ALONE_FOR_S = 1

interface Window {
  /** Tokens leased and not spent here. */
  tokens: number
  /** Tokens all instances held at the last lease. */
  seen: number
  /** The window's end by the database's clock: what tells one window from the next. */
  id: number
  /** The window's end by this process's clock. */
  resetAt: number
  spent: boolean
  leasing: Promise<void> | null
}

export function sharedRateLimiter(
  cluster: Pick<Cluster, 'leaseRate'>,
  now: () => number = () => Date.now() / 1000,
  maxKeys = MAX_KEYS,
): RateLimiter & { size(): number } {
  const windows = new Map<string, Window>()
  const keyOf = clientKeyer()
  const alone = rateLimiter(now)
  let aloneUntil = 0
  let nextSweep = 0

  function sweep(t: number) {
    if (t < nextSweep) return
    for (const [key, w] of windows) if (w.resetAt <= t && !w.leasing) windows.delete(key)
    nextSweep = t + SWEEP_EVERY_S
  }

  async function lease(key: string, w: Window, rule: Rule): Promise<void> {
    const want = Math.max(1, Math.min(10, Math.floor((rule.limit - w.seen) / 8)))
    const got = await cluster.leaseRate(key, want, rule.limit, rule.windowS)
    if (got.resetAt !== w.id) Object.assign(w, { tokens: 0, id: got.resetAt, spent: false })
    w.tokens += got.taken
    w.seen = got.granted
    w.resetAt = now() + got.resetIn
    if (got.taken === 0) w.spent = true
  }

  async function afterLease(key: string, w: Window, rule: Rule, method: string, path: string, ip: string): Promise<Limit> {
    for (;;) {
      try {
        await (w.leasing ??= lease(key, w, rule).finally(() => (w.leasing = null)))
      } catch {
        aloneUntil = now() + ALONE_FOR_S
        return alone.check(method, path, ip)
      }
      const answer = spend(w, rule, now())
      if (answer) return answer
    }
  }

  /** Decided here: a token spent, or the window spent; null when a lease must be asked for. */
  function spend(w: Window, rule: Rule, t: number): Limit | null {
    if (w.tokens > 0) {
      w.tokens--
      return decided(rule, true, w.tokens + rule.limit - w.seen, w.resetAt - t)
    }
    return w.spent ? decided(rule, false, 0, w.resetAt - t) : null
  }

  return {
    size: () => windows.size,
    check(method, path, ip) {
      const rule = ruleFor(method, path)
      if (!rule) return { rejected: null, headers: {} }
      const t = now()
      if (t < aloneUntil) return alone.check(method, path, ip)
      sweep(t)
      const key = `${rule.bucket}|${keyOf(ip)}`
      let w = windows.get(key)
      if (!w || (w.resetAt <= t && !w.leasing)) {
        if (w) windows.delete(key)
        // Full: the oldest window goes; what it held is only asked for again (unspent tokens are never lent twice).
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!)
        windows.set(key, (w = { tokens: 0, seen: 0, id: 0, resetAt: 0, spent: false, leasing: null }))
      }
      return spend(w, rule, t) ?? afterLease(key, w, rule, method, path, ip)
    },
  }
}
