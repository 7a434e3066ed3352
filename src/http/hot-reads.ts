// The hottest reads, answered straight from Bun's router with the same JSON text the Elysia routes serve (one
// function makes it for both), so they cost little more than a bare Bun.serve. Only plain, valid requests take
// this path; anything else (an unknown or invalid query, an id that fails) returns null and goes to Elysia, which
// answers it, errors included, exactly as it always does.
import type { Services } from './services.ts'
import type { PeriodBoard, PlainBoard } from '../domain/leaderboards.ts'
import { PERIODS, type Period } from '../domain/tallies.ts'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './pagination.ts'
import { feedJson } from './feeds.ts'
import { walletStatsJson } from './wallets.ts'
import { jsonResponse } from './json.ts'
import { entryRows } from './entries.ts'
import { x402Edge } from './x402.ts'
import { isFreeNow } from '../domain/entries.ts'
import { isUuid } from '../lib/ids.ts'

type Fast = (request: Request & { params: Record<string, string> }) => Response | null

const SIGNED_OR_PAYING = ['x-payment', 'payment-signature', 'x-wallet-address', 'x-signature', 'x-message', 'x-timestamp']
const PERIOD_BOARDS: PeriodBoard[] = ['most-popular', 'top-revenue', 'top-providers', 'top-buyers']
const PAGED_BOARDS: PlainBoard[] = ['trending', 'top-feeds']

/**
 * The query as a map when it holds only `allowed` keys, each at most once, in plain characters; else null. (Not
 * URLSearchParams: it was a tenth of the time of a hot read. Anything encoded is simply left to Elysia.)
 */
function plainQuery(url: string, allowed: string[]): Map<string, string> | null {
  const q = url.indexOf('?')
  const query = new Map<string, string>()
  if (q < 0 || q === url.length - 1) return query
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=')
    const key = eq < 0 ? pair : pair.slice(0, eq)
    const value = eq < 0 ? '' : pair.slice(eq + 1)
    if (!allowed.includes(key) || query.has(key) || !PLAIN.test(value)) return null
    query.set(key, value)
  }
  return query
}
const PLAIN = /^[A-Za-z0-9_.-]*$/

function pageSizeOf(query: Map<string, string>): number | null {
  const raw = query.get('page_size')
  if (raw === undefined) return DEFAULT_PAGE_SIZE
  const n = /^\d{1,3}$/.test(raw) ? Number(raw) : 0
  return n >= 1 && n <= MAX_PAGE_SIZE ? n : null
}

/** A failure is Elysia's to answer. */
function orNull(make: () => string): Response | null {
  try {
    return jsonResponse(make())
  } catch {
    return null
  }
}

export function hotReads(s: Services): Record<string, Fast> {
  const routes: Record<string, Fast> = {}
  for (const board of PERIOD_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = (request) => {
      const query = plainQuery(request.url, ['page_size', 'period'])
      const length = query && pageSizeOf(query)
      const period = query?.get('period') ?? 'all'
      if (!length || !Object.hasOwn(PERIODS, period)) return null
      return jsonResponse(s.market.byPeriod(board, period as Period, length))
    }
  }
  for (const board of PAGED_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = (request) => {
      const query = plainQuery(request.url, ['page_size'])
      const length = query && pageSizeOf(query)
      return length ? jsonResponse(s.market.plain(board, length)) : null
    }
  }
  routes['/v1/leaderboards/category-stats'] = (request) =>
    plainQuery(request.url, []) ? jsonResponse(s.market.plain('category-stats', Number.MAX_SAFE_INTEGER)) : null
  // A paid entry asked for without payment or sign-in: the 402 challenge (its JSON and its content URL alike).
  const x402 = x402Edge(s)
  const challenge: Fast = (request) => {
    if (!plainQuery(request.url, []) || SIGNED_OR_PAYING.some((h) => request.headers.has(h))) return null
    const { feed_id: feedId, entry_id: entryId } = request.params
    if (!isUuid(feedId) || !isUuid(entryId)) return null
    try {
      const { feed, entry } = entryRows(s, feedId.toLowerCase(), entryId.toLowerCase())
      if (!entry.is_active || !feed.is_active || isFreeNow(entry)) return null
      return x402.challenge(feed, entry, request)
    } catch {
      return null
    }
  }
  routes['/v1/feeds/:feed_id/entries/:entry_id'] = challenge
  routes['/v1/feeds/:feed_id/entries/:entry_id/content'] = challenge
  routes['/v1/feeds/:feed_id'] = (request) => (plainQuery(request.url, []) ? orNull(() => feedJson(s, request.params.feed_id)) : null)
  routes['/v1/wallets/:wallet_id/stats'] = (request) => (plainQuery(request.url, []) ? orNull(() => walletStatsJson(s, request.params.wallet_id)) : null)
  return routes
}
