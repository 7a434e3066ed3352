// Per-client-IP fixed windows, checked before routing so floods of bad requests are limited too (a plugin hooked
// at beforeHandle would only see requests that already passed auth, parsing and validation).
import { errorResponse } from './errors.ts'

interface Rule { bucket: string; limit: number; windowS: number }

const LEDGER: Rule = { bucket: 'transactions', limit: 100, windowS: 3600 }
const DEFAULT: Rule = { bucket: 'default', limit: 100, windowS: 10 }
const MAX_KEYS = 100_000

function ruleFor(method: string, path: string): Rule | null {
  if (path === '/health' || path === '/metrics') return null
  if (method === 'GET' && (path === '/v1/transactions' || path === '/v1/transactions/')) return LEDGER
  if (method === 'OPTIONS') return null // CORS preflights are not API calls
  return DEFAULT
}

export function rateLimiter(now: () => number = () => Date.now() / 1000) {
  const windows = new Map<string, { count: number; resetAt: number }>()
  let nextSweep = 0

  function sweep(t: number) {
    if (t < nextSweep && windows.size < MAX_KEYS) return
    for (const [key, w] of windows) if (w.resetAt <= t) windows.delete(key)
    if (windows.size >= MAX_KEYS) windows.clear() // under a flood of distinct addresses, forget rather than grow
    nextSweep = t + 10
  }

  return {
    /** Counts the request; answers 429 when over the limit, else the headers to add to the response. */
    check(method: string, path: string, ip: string): { rejected: Response | null; headers: Record<string, string> } {
      const rule = ruleFor(method, path)
      if (!rule) return { rejected: null, headers: {} }
      const t = now()
      sweep(t)
      const key = `${rule.bucket}|${ip}`
      let w = windows.get(key)
      if (!w || w.resetAt <= t) {
        w = { count: 0, resetAt: t + rule.windowS }
        windows.set(key, w)
      }
      w.count++
      const reset = Math.max(1, Math.ceil(w.resetAt - t))
      const headers = {
        'ratelimit-limit': String(rule.limit),
        'ratelimit-remaining': String(Math.max(0, rule.limit - w.count)),
        'ratelimit-reset': String(reset),
      }
      if (w.count <= rule.limit) return { rejected: null, headers }
      const rejected = errorResponse('RATE_LIMITED', 'too many requests', `limit is ${rule.limit} requests per ${rule.windowS} s; retry after ${reset} s`)
      for (const [k, v] of Object.entries({ ...headers, 'retry-after': String(reset) })) rejected.headers.set(k, v)
      return { rejected, headers }
    },
  }
}
