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
import type { Answer } from './edge.ts'
import { entryRows } from './entries.ts'
import { x402Edge } from './x402.ts'
import { isFreeNow } from '../domain/entries.ts'
import { isUuid } from '../lib/ids.ts'

/** JSON text of a 200, a response, or null: Elysia answers. */
type Fast = (request: Request & { params: Record<string, string> }) => Answer | null

const SIGNED_OR_PAYING = ['x-payment', 'payment-signature', 'x-wallet-address', 'x-signature', 'x-message', 'x-timestamp']
const PERIOD_BOARDS: PeriodBoard[] = ['most-popular', 'top-revenue', 'top-providers', 'top-buyers']
const PAGED_BOARDS: PlainBoard[] = ['trending', 'top-feeds']

/**
 * The query as a map when it holds only `allowed` keys, each at most once, in plain characters; else null. (Not
 * URLSearchParams: it was a tenth of the time of a hot read. Anything encoded is simply left to Elysia.) Clients
 * repeat the same few queries, so each query string is read once.
 */
function queryReader(allowed: string[]): (url: string) => Map<string, string> | null {
  const seen = new Map<string, Map<string, string> | null>()
  const none = new Map<string, string>()
  return (url) => {
    const q = url.indexOf('?')
    if (q < 0 || q === url.length - 1) return none
    const search = url.slice(q + 1)
    let query = seen.get(search)
    if (query === undefined) {
      query = parse(search, allowed)
      if (seen.size >= 1024) seen.clear()
      seen.set(search, query)
    }
    return query
  }
}

function parse(search: string, allowed: string[]): Map<string, string> | null {
  const query = new Map<string, string>()
  for (const pair of search.split('&')) {
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
function orNull(make: () => string): string | null {
  try {
    return make()
  } catch {
    return null
  }
}

export function hotReads(s: Services): Record<string, Fast> {
  const routes: Record<string, Fast> = {}
  const boardQuery = queryReader(['page_size', 'period'])
  const pageQuery = queryReader(['page_size'])
  const noQuery = queryReader([])
  for (const board of PERIOD_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = (request) => {
      const query = boardQuery(request.url)
      const length = query && pageSizeOf(query)
      const period = query?.get('period') ?? 'all'
      if (!length || !Object.hasOwn(PERIODS, period)) return null
      return s.market.byPeriod(board, period as Period, length)
    }
  }
  for (const board of PAGED_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = (request) => {
      const query = pageQuery(request.url)
      const length = query && pageSizeOf(query)
      return length ? s.market.plain(board, length) : null
    }
  }
  routes['/v1/leaderboards/category-stats'] = (request) =>
    noQuery(request.url) ? s.market.plain('category-stats', Number.MAX_SAFE_INTEGER) : null
  // A paid entry asked for without payment or sign-in: the 402 challenge (its JSON and its content URL alike).
  const x402 = x402Edge(s)
  const challenge: Fast = (request) => {
    if (!noQuery(request.url) || SIGNED_OR_PAYING.some((h) => request.headers.has(h))) return null
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
  routes['/v1/feeds/:feed_id'] = (request) => (noQuery(request.url) ? orNull(() => feedJson(s, request.params.feed_id)) : null)
  routes['/v1/wallets/:wallet_id/stats'] = (request) => (noQuery(request.url) ? orNull(() => walletStatsJson(s, request.params.wallet_id)) : null)
  return routes
}
