// GET /discovery/search, the x402 v2 bazaar's search (specs/extensions/bazaar.md of the x402 repository,
// x402-foundation/x402 at 5dc34292, "GET /discovery/search"), as @x402/extensions 2.27's withBazaar(client)
// .extensions.bazaar.search({ query, … }) calls it: `${url}/discovery/search?query=…` with the list's filters (type,
// payTo, scheme, network, extensions), an advisory `limit` and `cursor`; it reads {x402Version, resources,
// partialResults, pagination: {limit, cursor}}. Also under /x402/v2, where a v2 client's URL points (discovery.ts).
// Backed by the full-text search of /v1/search (domain/search.ts), most relevant first: an entry found that is for
// sale now is listed as the list lists it, a feed found with a pass on sale by its pass; the rest is not for sale.
// The tools of /mcp are not in the search index: type=mcp finds nothing here (the list has them).
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { discovery, V2_DISCOVERY_BASE, type Listed } from '../chain/x402/discovery.ts'
import { cursorAfter, searchWords, type SearchCursor, type SearchItem } from '../domain/search.ts'
import { isFreeNow } from '../domain/entries.ts'
import { DomainError } from '../domain/errors.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { errors } from '../edge/openapi.ts'
import { nowSeconds } from '../lib/clock.ts'
import { forSaleItems } from './for-sale.ts'
import { DEFAULT_LIMIT, DiscoveredV2, filterQuery, limitOf, MAX_LIMIT, payToOf, type Filters } from './discovery-query.ts'

/** The most hits one answer reads: past them, the answer ends with a cursor (partialResults), however few it found. */
export const MAX_SCAN = 200

const SearchAnswer = t.Object(
  {
    x402Version: t.Literal(2),
    resources: t.Array(DiscoveredV2, { description: 'the passes and entries for sale found, most relevant first' }),
    partialResults: t.Boolean({ description: 'true when more may match: ask again with the cursor' }),
    pagination: t.Object({
      limit: t.Integer(),
      cursor: t.Union([t.String(), t.Null()], { description: 'where the next page starts; null when nothing follows' }),
    }),
  },
  { description: 'x402 v2 bazaar search results' },
)

type SearchQuery = Filters & { query?: string; limit?: string; cursor?: string }

export const discoverySearchRoutes = (s: Services) => {
  const lists = discovery(s.config.networks)
  const { passItem, entryItem } = forSaleItems(s)

  const categoryName = async (id: string | null) => (id === null ? null : ((await s.categories.get(id).catch(() => null))?.name ?? null))

  /** What a hit sells now (paid to `payTo`, when given), as the list lists it; null when it sells nothing. */
  async function sold({ kind, feed, entry }: SearchItem, now: number, payTo: string | undefined): Promise<Listed | null> {
    if (payTo !== undefined && feed.owner_wallet_address.toLowerCase() !== payTo) return null
    if (kind === 'feed')
      return feed.pass && feed.is_active && !feed.taken_down
        ? passItem({ feed, category_name: await categoryName(feed.category_id) })
        : null
    if (!entry || isFreeNow(entry, now)) return null
    const placement = { feed_name: feed.name, owner_wallet: feed.owner_wallet_address, category_name: await categoryName(feed.category_id) }
    return entryItem({ ...entry, ...placement })
  }

  async function answer(query: SearchQuery): Promise<Response> {
    const limit = limitOf(query.limit)
    const payTo = payToOf(query.payTo)
    const q = query.query ?? ''
    if (searchWords(q).length === 0)
      throw new DomainError('INVALID_PARAMETER', 'invalid query', 'query must hold at least one word (letters or digits)')
    // A cursor continues its own search only (its words and payTo).
    const scope = `discovery search:${JSON.stringify([q, payTo ?? null])}`
    let after: SearchCursor | undefined
    try {
      after = s.pages.decode<SearchCursor>(scope, query.cursor)
    } catch {
      throw new DomainError('INVALID_PARAMETER', 'invalid cursor', 'cursor must be the pagination.cursor of the previous answer')
    }
    const empty = { x402Version: 2, resources: [], partialResults: false, pagination: { limit, cursor: null } }
    if (!lists.kinds(query).http) return jsonResponse(JSON.stringify(empty))
    const key = `discovery search:${JSON.stringify([q, payTo ?? null, limit, query.cursor ?? null])}`
    return jsonResponse(
      await s.cached.get(key, async (staleFrom) => {
        const now = nowSeconds()
        const found: Listed[] = []
        let [scanned, more, cursor] = [0, true, after]
        while (more && found.length < limit && scanned < MAX_SCAN) {
          const batch = Math.min(MAX_LIMIT, MAX_SCAN - scanned)
          const hits = await s.search.search({ q, after: cursor, limit: batch })
          scanned += batch
          more = hits.length === batch
          for (const [i, hit] of hits.entries()) {
            cursor = cursorAfter(hit)
            const listed = await sold(hit, now, payTo)
            if (listed) found.push(listed)
            if (hit.entry?.expires_at != null && !isFreeNow(hit.entry, now)) staleFrom(hit.entry.expires_at)
            if (found.length === limit) {
              more ||= i < hits.length - 1
              break
            }
          }
        }
        const next = more && cursor ? s.pages.encode(scope, cursor) : null
        const { items } = lists.v2List(found, { limit, offset: 0, total: found.length })
        return JSON.stringify({ x402Version: 2, resources: items, partialResults: next !== null, pagination: { limit, cursor: next } })
      }),
    )
  }

  const hook = {
    query: t.Object({
      query: t.Optional(t.String({ description: 'words to find (required): titles, descriptions, tags, free text' })),
      ...filterQuery,
      limit: t.Optional(t.String({ description: `advisory, 1..${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
      cursor: t.Optional(t.String({ description: 'pagination.cursor of the previous answer' })),
    }),
    response: { 200: SearchAnswer, ...errors(400) },
    detail: {
      summary: 'Search what is for sale (x402 bazaar search)',
      description:
        "The bazaar's search: the full-text search of /v1/search, answered as x402 v2 discovery items (passes and paid " +
        "entries for sale now, most relevant first). @x402/extensions' withBazaar(new HTTPFacilitatorClient({ url })) " +
        '.extensions.bazaar.search({ query }) reads it, url being this server or <this server>/x402/v2.',
    },
  }
  return new Elysia({ tags: ['Discovery'] })
    .get('/discovery/search', ({ query }) => answer(query), hook)
    .get(`${V2_DISCOVERY_BASE}/discovery/search`, ({ query }) => answer(query), { ...hook, detail: { ...hook.detail, hide: true } })
}
