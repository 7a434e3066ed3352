// The pages a reader browses the market by: /feeds (every active feed, newest, most bought or top earning first),
// /categories/{id} and /tags/{tag} (the same, narrowed), /search; each kept in the read memo like the other pages.
import { soldOnNames } from '../config.ts'
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import type { FeedRecord } from '../models/records.ts'
import type { FeedOrder } from '../models/feed.ts'
import { DomainError } from '../domain/errors.ts'
import { cursorAfter, type SearchCursor } from '../domain/search.ts'
import { browsePage, BROWSE_SORTS, type BrowseSort } from '../pages/browse.ts'
import { searchPage } from '../pages/search.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import { answerPage, feedCardsOf } from './pages.ts'
import { keptPage } from './kept-pages.ts'
import { page as pageOf } from './pagination.ts'
import { uuid } from './params.ts'

const BROWSE_FEEDS = 24
const ORDER_OF: Record<BrowseSort, FeedOrder> = { newest: 'newest', popular: 'purchases', revenue: 'revenue' }
type Cursor = string | [string, string]

const sortOf = (raw: unknown): BrowseSort => {
  if (raw === undefined) return 'newest'
  if (BROWSE_SORTS.some(([sort]) => sort === raw)) return raw as BrowseSort
  throw new DomainError('INVALID_SORT', 'invalid sort', `sort must be one of ${BROWSE_SORTS.map(([s]) => s).join(', ')}`)
}

interface Listing {
  title: string
  lead: string
  categoryId?: string
  tag?: string
}

/** A listing's page, kept: `describe` (the category's name, say) is read only when the page is made. */
function listingPage(s: Services, path: string, query: Record<string, unknown>, describe: () => Listing | Promise<Listing>) {
  const sort = sortOf(query.sort)
  const token = typeof query.page_token === 'string' ? query.page_token : undefined
  const scope = `browse:${path}:${sort}`
  return keptPage(s, `${scope}?${token ?? ''}`, async () => {
    const listing = await describe()
    const cursor = s.pages.decode<Cursor>(scope, token)
    const order = ORDER_OF[sort]
    const rows = await s.feeds.list({
      category: listing.categoryId,
      tags: listing.tag ? [listing.tag] : undefined,
      is_active: true,
      min_entries: 0,
      order,
      beforeId: typeof cursor === 'string' ? cursor : undefined,
      beforeRanked: Array.isArray(cursor) ? [BigInt(cursor[0]), cursor[1]] : undefined,
      limit: BROWSE_FEEDS + 1,
    })
    const figure = (f: FeedRecord) => (order === 'purchases' ? String(f.total_purchases) : f.total_revenue.toString())
    const listed = pageOf(rows, BROWSE_FEEDS, s.pages, scope, (last): Cursor => (order === 'newest' ? last.id : [figure(last), last.id]))
    const categories = await s.categories.list({ isActive: true, limit: 100 })
    return browsePage({
      network: soldOnNames(s.config),
      path,
      title: listing.title,
      lead: listing.lead,
      sort,
      feeds: await feedCardsOf(s, listed.data),
      categories,
      categoryId: listing.categoryId ?? null,
      nextPageToken: listed.pagination.next_page_token,
      assetVersion: ASSET_VERSION,
    })
  })
}

const SEARCH_RESULTS = 20

/** The search page: the hits of q (none asked: just the box), kept like the API's answer of the same query. */
function searchResults(s: Services, query: Record<string, unknown>) {
  const q = typeof query.q === 'string' ? query.q.trim() : ''
  const token = typeof query.page_token === 'string' ? query.page_token : undefined
  const scope = `search page:${q}`
  return keptPage(s, `${scope}?${token ?? ''}`, async () => {
    const cursor = s.pages.decode<SearchCursor>(scope, token)
    const items = q ? await s.search.search({ q, after: cursor, limit: SEARCH_RESULTS + 1 }) : []
    const listed = pageOf(items, SEARCH_RESULTS, s.pages, scope, cursorAfter)
    return searchPage({
      network: soldOnNames(s.config),
      q,
      items: listed.data,
      nextPageToken: listed.pagination.next_page_token,
      assetVersion: ASSET_VERSION,
    })
  })
}

export const browsePageRoutes = (s: Services) =>
  new Elysia({ detail: { hide: true } })
    .get('/search', ({ query }) => answerPage(s, () => searchResults(s, query)))
    .get('/feeds', ({ query }) =>
      answerPage(s, () =>
        listingPage(s, '/feeds', query, () => ({ title: 'All feeds', lead: 'Every feed on this market, a page at a time.' })),
      ),
    )
    .get('/categories/:category_id', ({ params, query }) =>
      answerPage(s, () => {
        const categoryId = uuid(params.category_id, 'category_id')
        return listingPage(s, `/categories/${categoryId}`, query, async () => {
          const category = await s.categories.get(categoryId)
          return { title: category.name, lead: category.description ?? `Feeds in ${category.name}.`, categoryId: category.id }
        })
      }),
    )
    .get('/tags/:tag', ({ params, query }) =>
      answerPage(s, () => {
        const tag = decodeURIComponent(params.tag)
        return listingPage(s, `/tags/${encodeURIComponent(tag)}`, query, () => ({ title: `#${tag}`, lead: `Feeds tagged ${tag}.`, tag }))
      }),
    )
