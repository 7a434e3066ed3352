// The hottest reads, answered straight from Bun's router with the same JSON text the Elysia routes serve (one
// function makes it for both), so they cost little more than a bare Bun.serve. Only plain, valid requests take
// this path; anything else (an unknown or invalid query, an id that fails) returns null and goes to Elysia, which
// answers it, errors included, exactly as it always does.
import type { Services } from './services.ts'
import { PAGED_BOARDS, PERIOD_BOARDS, WHOLE_BOARDS } from '../models/leaderboard.ts'
import { SIGNED_HEADER_NAMES } from '../models/auth.ts'
import { PERIODS, type Period } from '../domain/tallies.ts'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './pagination.ts'
import { heldFeedJson, heldFeedListJson } from './feeds.ts'
import { heldWalletStatsJson } from './wallets.ts'
import { heldRecentEntriesJson } from './leaderboards.ts'
import { coverImages } from './cover-images.ts'
import { feedKey, heldPage, homeKey } from './kept-pages.ts'
import { sessionCookie } from './wallet-auth.ts'
import type { Prepared } from '../edge/request-wrapper.ts'
import type { HotRead, HotReads } from '../edge/serve.ts'
import type { EntryRecord } from '../models/records.ts'
import { entryGate } from './entry-gate.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { sessionContent } from './hot-session-content.ts'
import { heldContent } from './serve-content.ts'
import { PAYING_OR_SIGNING_IN, wantsPage } from '../chain/x402/resource-server.ts'
import { isFreeNow } from '../domain/entries.ts'
import { isUuid } from '../lib/ids.ts'

const SIGNED_OR_PAYING = [...PAYING_OR_SIGNING_IN, ...SIGNED_HEADER_NAMES]
const CONDITIONAL = ['range', 'if-range', 'if-none-match']
/** What the hot route holds of an entry's URL: its 402 (and paywall page), or a free entry's bytes. */
type HotEntry =
  | { path: string; entry: EntryRecord; answer: Prepared; page: Prepared; ownerLc: string; tag: PriceTag }
  | { path: string; entry: EntryRecord; bytes: Prepared<Uint8Array<ArrayBuffer>> }

/**
 * A free entry's bytes up to this size are kept ready to serve from the hot route (the read memo weighs them); larger
 * ones stream from Elysia's.
 */
const FREE_HELD_BYTES = 1024 * 1024

/**
 * A leaderboard route: the body answered to each query string, kept until the next snapshot is installed (clients
 * repeat the same few queries; at most 1024 are kept), so a request costs one lookup. Null: Elysia answers.
 */
function boardRoute(s: Services, allowed: string[], bodyFor: (query: Map<string, string>) => string | null): HotRead {
  let generation = -1
  let bodies = new Map<string, string | null>()
  return (request) => {
    const url = request.url
    const q = url.indexOf('?')
    const search = q < 0 ? '' : url.slice(q + 1)
    if (generation !== s.stats.boardsGeneration()) {
      generation = s.stats.boardsGeneration()
      bodies = new Map()
    }
    let body = bodies.get(search)
    if (body === undefined) {
      const query = parse(search, allowed)
      body = query && bodyFor(query)
      if (bodies.size >= 1024) bodies.clear()
      bodies.set(search, body)
    }
    return body
  }
}

/** A URL without a query (a bare "?" is none). */
function withoutQuery(url: string): boolean {
  const q = url.indexOf('?')
  return q < 0 || q === url.length - 1
}

/**
 * The query as a map when it holds only `allowed` keys, each at most once, in plain characters; else null. (Not
 * URLSearchParams: it was a tenth of the time of a hot read. Anything encoded is simply left to Elysia.)
 */
function parse(search: string, allowed: string[]): Map<string, string> | null {
  const query = new Map<string, string>()
  if (search === '') return query
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

/** The hot reads of the app's routes, by route template: the composition root hands them to serve() (edge/serve.ts). */
export function hotReads(s: Services): HotReads {
  const routes: HotReads = {}
  for (const board of PERIOD_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = boardRoute(s, ['page_size', 'period'], (query) => {
      const length = pageSizeOf(query)
      const period = query.get('period') ?? 'all'
      return length && Object.hasOwn(PERIODS, period) ? s.stats.byPeriod(board, period as Period, length) : null
    })
  }
  for (const board of PAGED_BOARDS) {
    routes[`/v1/leaderboards/${board}`] = boardRoute(s, ['page_size'], (query) => {
      const length = pageSizeOf(query)
      return length ? s.stats.plain(board, length) : null
    })
  }
  for (const board of WHOLE_BOARDS)
    routes[`/v1/leaderboards/${board}`] = boardRoute(s, [], () => s.stats.plain(board, Number.MAX_SAFE_INTEGER))
  // Live, not a snapshot: its pages are kept until the database next changes (see recentEntriesJson).
  routes['/v1/leaderboards/recent-entries'] = (request) => {
    const q = request.url.indexOf('?')
    const query = parse(q < 0 ? '' : request.url.slice(q + 1), ['page_size', 'page_token'])
    const length = query && pageSizeOf(query)
    const token = query?.get('page_token')
    return query && length ? (heldRecentEntriesJson(s, length, token === '' ? undefined : token) ?? null) : null
  }
  // A paid entry asked for without payment or sign-in: the 402 challenge (its JSON and its content URL alike), or
  // its paywall page for a browser; and a free entry's small content, its bytes as Elysia's route serves them.
  const gate = entryGate(s)
  const sessionRead = sessionContent(s)
  const challenge = (suffix: string): HotRead => {
    /** The prepared answer of an entry's URL, or null when Elysia answers (invalid or unknown ids, withdrawn, large). */
    async function prepare(feedId: string, entryId: string): Promise<HotEntry | null> {
      // Only the canonical form of the URL (lower-case ids, nothing encoded): its path is the resource as is.
      if (!isUuid(feedId) || !isUuid(entryId) || feedId !== feedId.toLowerCase() || entryId !== entryId.toLowerCase()) return null
      try {
        const { feed, entry } = await s.entries.get(feedId, entryId)
        const path = `/v1/feeds/${feedId}/entries/${entryId}${suffix}`
        // The answer Elysia's route gives a caller who neither signs nor pays; only a 402 is answered here.
        const passed = gate(feed, entry, null, null, () => path)
        if (passed.kind === 'answered') {
          return {
            path,
            entry,
            answer: passed.answer,
            page: await gate.paywallAt(feed, entry, path),
            ownerLc: feed.owner_wallet_address.toLowerCase(),
            tag: gate.tagAt(feed, entry, path),
          }
        }
        const bytes =
          suffix === '/content' && passed.kind === 'serve' && isFreeNow(entry)
            ? await heldContent(s.content, await s.entries.servable(entry), {
                cacheControl: 'public, max-age=300',
                maxBytes: FREE_HELD_BYTES,
                sealed: false,
              })
            : null
        return bytes && { path, entry, bytes }
      } catch {
        return null
      }
    }
    // One cached lookup per request: each piece of work on this path costs several times more between network
    // events than in a loop. A URL not prepared yet is answered by Elysia while it is prepared for the next.
    return (request) => {
      const { feed_id: feedId, entry_id: entryId } = request.params
      const key = `402${suffix}:${feedId}/${entryId}`
      const hot = s.cached.peek<HotEntry | null>(key)
      if (hot === undefined)
        void s.cached.get(
          key,
          () => prepare(feedId, entryId),
          (held) => 2_000 + (held && 'bytes' in held ? held.bytes.body.byteLength : 0),
        )
      if (!hot || !request.url.endsWith(hot.path) || SIGNED_OR_PAYING.some((h) => request.headers.has(h))) return null
      const session = sessionCookie(request.headers)
      // Bytes: whole, to a request that asks for nothing conditional or partial (those are Elysia's).
      const whole = !CONDITIONAL.some((h) => request.headers.has(h))
      if ('bytes' in hot) return whole && !session ? hot.bytes : null
      if (isFreeNow(hot.entry)) return null
      // A paid entry's bytes to its owner or a buyer signed in by a browser session (hot-session-content.ts).
      if (session) return suffix === '/content' && whole ? sessionRead(session, hot.entry, hot.ownerLc) : null
      // Kept, but each with a sign-in-with-x challenge of its own (a nonce is good for one proof); counted in memory.
      s.challenges.served(hot.entry.feed_id, hot.entry.id)
      return gate.freshChallenge(wantsPage(request.headers) ? hot.page : hot.answer, hot.tag)
    }
  }
  routes['/v1/feeds/:feed_id/entries/:entry_id'] = challenge('')
  routes['/v1/feeds/:feed_id/entries/:entry_id/content'] = challenge('/content')
  routes['/v1/feeds/:feed_id/image'] = coverImages(s)
  // The market-wide list, by page size and cursor only (any other filter is Elysia's), once the route has made the page.
  routes['/v1/feeds'] = (request) => {
    const q = request.url.indexOf('?')
    const query = parse(q < 0 ? '' : request.url.slice(q + 1), ['page_size', 'page_token'])
    return query ? (heldFeedListJson(s, Object.fromEntries(query)) ?? null) : null
  }
  routes['/v1/feeds/:feed_id'] = (request) => (withoutQuery(request.url) ? (heldFeedJson(s, request.params.feed_id) ?? null) : null)
  // The landing and feed pages, once made (routes/pages.ts).
  routes['/'] = (request) => (withoutQuery(request.url) ? (heldPage(s, homeKey(s)) ?? null) : null)
  // A person signed in may hold a pass the page tells of: theirs is made by the route.
  routes['/feeds/:feed_id'] = (request) => {
    const id = request.params.feed_id
    if (!withoutQuery(request.url) || !isUuid(id) || sessionCookie(request.headers)) return null
    return heldPage(s, feedKey(id.toLowerCase())) ?? null
  }
  routes['/v1/wallets/:wallet_id/stats'] = (request) =>
    withoutQuery(request.url) ? (heldWalletStatsJson(s, request.params.wallet_id) ?? null) : null
  return routes
}
