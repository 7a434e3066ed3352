// /v1/leaderboards: eight public rankings, served from the last snapshot (recent-entries is live).
import { Elysia, t, type TSchema } from 'elysia'
import type { Services } from './services.ts'
import type { PeriodBoard, PlainBoard } from '../domain/leaderboards.ts'
import { entryBody, EntrySchema } from './entries.ts'
import { page, pageQuery, pageSize, paginationSchema } from './pagination.ts'
import { nowSeconds } from '../lib/clock.ts'
import { jsonResponse } from './json.ts'

const S = t.String()
const NS = t.Nullable(t.String())
const N = t.Number()
const Tags = t.Array(t.String())
const Period = t.Optional(t.String({ description: '1d, 7d, 30d or all (default)' }))

const feedRef = { owner_id: S, owner_username: NS, owner_wallet: S, category_id: NS, category_name: NS, description: NS, image_cid: NS, is_active: t.Boolean(), tags: Tags, total_entries: N }
const Items = {
  'most-popular': t.Object({ rank: S, feed_id: S, feed_name: S, id: S, name: S, ...feedRef, total_purchases: S, total_revenue: S, unique_buyers: S, avg_revenue_per_purchase: S, created_at: N, updated_at: N }),
  'top-revenue': t.Object({ rank: S, feed_id: S, feed_name: S, id: S, name: S, ...feedRef, total_purchases: S, total_revenue: S, unique_buyers: S, feed_created_at: N, feed_updated_at: N }),
  'top-providers': t.Object({ rank: S, user_id: S, username: NS, wallet_address: S, total_feeds: S, total_entries: S, total_purchases: S, total_revenue: S, unique_buyers: S, joined_at: N }),
  'top-buyers': t.Object({ rank: S, user_id: S, username: NS, wallet_address: S, total_purchases: S, total_spent: S, unique_entries_purchased: S, unique_feeds_purchased_from: S, joined_at: N }),
  trending: t.Object({
    rank: S, id: S, owner_id: S, owner_wallet: S, owner_username: NS, category_id: NS, category_name: NS, name: S, description: NS, image_cid: NS,
    is_active: t.Boolean(), total_entries: N, total_purchases: N, total_revenue: S, tags: Tags, created_at: N, updated_at: N,
    purchases_last_7d: S, revenue_last_7d: S, unique_buyers_last_7d: S,
  }),
  'top-feeds': t.Object({
    id: S, owner_id: S, category_id: NS, name: S, description: NS, image_cid: NS, is_active: t.Boolean(), total_entries: N, total_purchases: N,
    total_revenue: S, tags: Tags, created_at: N, updated_at: N, owner_wallet: S, owner_username: NS, category_name: NS,
  }),
  'category-stats': t.Object({
    category_id: S, category_name: S, category_description: NS, category_icon_url: NS, total_feeds: S, total_providers: S, total_entries: S,
    total_purchases: S, total_revenue: S, unique_buyers: S, avg_purchase_amount: S,
  }),
}
const RecentEntry = t.Composite([t.Omit(EntrySchema, ['content_url']), t.Object({ feed_name: S, feed_owner_id: S, owner_wallet: S, category_name: NS })])

const DESCRIPTIONS: Record<string, string> = {
  'most-popular': 'Active feeds by purchases in the period.',
  'top-revenue': 'Active feeds by revenue in the period.',
  'top-providers': 'Creators by revenue from their active feeds in the period.',
  'top-buyers': 'Buyers by amount spent in the period.',
  trending: 'Active feeds by revenue in the last 7 days.',
  'top-feeds': 'Active feeds by number of entries.',
  'category-stats': 'Every active category, over its active feeds.',
}

export const leaderboardRoutes = (s: Services) => {
  const app = new Elysia({ prefix: '/v1/leaderboards', tags: ['Leaderboards'] })
  const withPeriod = (board: PeriodBoard, item: TSchema) =>
    app.get(`/${board}`, ({ query }) => {
      const period = s.market.period(query.period)
      return jsonResponse(s.market.byPeriod(board, period, pageSize(query.page_size)))
    }, {
      query: t.Object({ page_size: pageQuery.page_size, period: Period }),
      response: { 200: t.Object({ data: t.Array(item), period: S }) },
      detail: { summary: board, description: `${DESCRIPTIONS[board]} page_size 1..100 (default 20).` },
    })
  withPeriod('most-popular', Items['most-popular'])
  withPeriod('top-revenue', Items['top-revenue'])
  withPeriod('top-providers', Items['top-providers'])
  withPeriod('top-buyers', Items['top-buyers'])
  const plain = (board: PlainBoard, item: TSchema, paged: boolean) =>
    app.get(`/${board}`, ({ query }) => jsonResponse(s.market.plain(board, paged ? pageSize((query as { page_size?: string }).page_size) : Number.MAX_SAFE_INTEGER)), {
      query: paged ? t.Object({ page_size: pageQuery.page_size }) : t.Object({}),
      response: { 200: t.Object({ data: t.Array(item) }) },
      detail: { summary: board, description: DESCRIPTIONS[board] },
    })
  plain('trending', Items.trending, true)
  plain('top-feeds', Items['top-feeds'], true)
  plain('category-stats', Items['category-stats'], false)
  return app.get('/recent-entries', ({ query }) => {
    const limit = pageSize(query.page_size)
    const scope = 'recent-entries'
    const rows = s.market.recentEntries(s.pages.decode<string>(scope, query.page_token), limit + 1)
    const result = page(rows, limit, s.pages, scope, (last) => last.id)
    const now = nowSeconds()
    return {
      data: result.data.map((e) => ({ ...entryBody(e, now), feed_name: e.feed_name, feed_owner_id: e.feed_owner_id, owner_wallet: e.owner_wallet, category_name: e.category_name })),
      pagination: result.pagination,
    }
  }, {
    query: t.Object(pageQuery),
    response: { 200: t.Object({ data: t.Array(RecentEntry), pagination: paginationSchema }) },
    detail: { summary: 'recent-entries', description: 'Newest active entries of active feeds, cursor paginated.' },
  })
}
