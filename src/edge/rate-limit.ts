// Per-client fixed windows, checked before routing so floods of bad requests are limited too (a plugin hooked
// at beforeHandle would only see requests that already passed auth, parsing and validation).
import ipaddr from 'ipaddr.js'
import { errorResponse } from './errors.ts'

export interface Rule {
  bucket: string
  limit: number
  windowS: number
}
/** What a check decided: a 429 to answer, or the headers to add to the answer. */
export interface Limit {
  rejected: Response | null
  headers: Record<string, string>
}
/** The limiter the request wrapper asks (this one, or rate-limit-shared.ts's across instances). */
export interface RateLimiter {
  check(method: string, path: string, ip: string): Limit | Promise<Limit>
}
interface Window {
  count: number
  resetAt: number
}

const LEDGER: Rule = { bucket: 'transactions', limit: 100, windowS: 3600 }
const DEFAULT: Rule = { bucket: 'default', limit: 100, windowS: 10 }
const MAX_KEYS = 100_000
const SWEEP_EVERY_S = 10
const MAX_REMEMBERED_ADDRESSES = 4096

export function ruleFor(method: string, path: string): Rule | null {
  if (path === '/health') return null
  if (method === 'GET' && (path === '/v1/transactions' || path === '/v1/transactions/')) return LEDGER
  if (method === 'OPTIONS') return null // CORS preflights are not API calls
  return DEFAULT
}

/**
 * Who a limit counts against: an IPv4 address as it is; an IPv6 address by its /64, the block one subscriber
 * usually holds whole (each of its 2^64 addresses would otherwise have a budget of its own). Parsing an IPv6
 * address costs about as much as a cached read's own work, so the answer for recent addresses is remembered.
 */
export function clientKeyer() {
  const remembered = new Map<string, string>()
  function keyOf(address: string): string {
    try {
      const parsed = ipaddr.parse(address)
      if (parsed.kind() === 'ipv4') return parsed.toString()
      const v6 = parsed as ipaddr.IPv6
      if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString()
      return `${v6.parts
        .slice(0, 4)
        .map((part) => part.toString(16))
        .join(':')}::/64`
    } catch {
      return address // not an address (a proxy's "unknown"): counted as given
    }
  }
  return (address: string): string => {
    if (!address.includes(':')) return address
    let key = remembered.get(address)
    if (key === undefined) {
      if (remembered.size >= MAX_REMEMBERED_ADDRESSES) remembered.delete(remembered.keys().next().value!)
      remembered.set(address, (key = keyOf(address)))
    }
    return key
  }
}

/**
 * The table holds at most `maxKeys` windows. When it is full, the oldest window is dropped to make room: first
 * among clients still under their limit, and only when every window is at its limit among those, so a flood of
 * new addresses never lifts the limit of a client that reached it (and the table is never cleared).
 */
export function rateLimiter(now: () => number = () => Date.now() / 1000, maxKeys = MAX_KEYS) {
  // Oldest first: windows under their limit by when they started (a renewed one is inserted again), windows at it
  // by when they reached it.
  const open = new Map<string, Window>()
  const limited = new Map<string, Window>()
  const keyOf = clientKeyer()
  let nextSweep = 0

  function sweep(t: number) {
    if (t < nextSweep) return
    for (const table of [open, limited]) for (const [key, w] of table) if (w.resetAt <= t) table.delete(key)
    nextSweep = t + SWEEP_EVERY_S
  }

  function makeRoom() {
    while (open.size + limited.size >= maxKeys) {
      const table = open.size > 0 ? open : limited
      table.delete(table.keys().next().value!)
    }
  }

  return {
    /** How many windows are held (for tests and metrics). */
    size: () => open.size + limited.size,
    /** Counts the request; answers 429 when over the limit, else the headers to add to the response. */
    check(method: string, path: string, ip: string): Limit {
      const rule = ruleFor(method, path)
      if (!rule) return { rejected: null, headers: {} }
      const t = now()
      sweep(t)
      const key = `${rule.bucket}|${keyOf(ip)}`
      let w = open.get(key) ?? limited.get(key)
      if (!w || w.resetAt <= t) {
        if (w) open.delete(key) || limited.delete(key)
        makeRoom()
        w = { count: 0, resetAt: t + rule.windowS }
        open.set(key, w)
      }
      if (++w.count === rule.limit) {
        open.delete(key)
        limited.set(key, w)
      }
      return decided(rule, w.count <= rule.limit, rule.limit - w.count, w.resetAt - t)
    },
  }
}

/** The answer to a counted request: admitted or not, with `remaining` requests left and `resetInS` seconds to go. */
export function decided(rule: Rule, admitted: boolean, remaining: number, resetInS: number): Limit {
  const reset = Math.max(1, Math.ceil(resetInS))
  const headers = {
    'ratelimit-limit': String(rule.limit),
    'ratelimit-remaining': String(Math.max(0, remaining)),
    'ratelimit-reset': String(reset),
  }
  if (admitted) return { rejected: null, headers }
  const rejected = errorResponse(
    'RATE_LIMITED',
    'too many requests',
    `limit is ${rule.limit} requests per ${rule.windowS} s; retry after ${reset} s`,
  )
  for (const [k, v] of Object.entries({ ...headers, 'retry-after': String(reset) })) rejected.headers.set(k, v)
  return { rejected, headers }
}
