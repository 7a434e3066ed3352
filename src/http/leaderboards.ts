// /v1/leaderboards: eight public rankings, served from the last snapshot (recent-entries is live).
import { Elysia, t, type TSchema } from 'elysia'
import type { Services } from './services.ts'
import type { PeriodBoard, PlainBoard } from '../domain/leaderboards.ts'
import { entryBody } from './entries.ts'
import { BOARD_ITEMS, Page, RecentEntry } from '../models/index.ts'
import { errors } from './openapi.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { nowSeconds } from '../lib/clock.ts'
import { jsonResponse } from './json.ts'

const Period = t.Optional(t.String({ description: '1d, 7d, 30d or all (default)' }))

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
      response: { 200: t.Object({ data: t.Array(item), period: t.String({ description: 'the period of this board' }) }) },
      detail: { summary: board, description: `${DESCRIPTIONS[board]} page_size 1..100 (default 20).` },
    })
  withPeriod('most-popular', BOARD_ITEMS['most-popular'])
  withPeriod('top-revenue', BOARD_ITEMS['top-revenue'])
  withPeriod('top-providers', BOARD_ITEMS['top-providers'])
  withPeriod('top-buyers', BOARD_ITEMS['top-buyers'])
  const plain = (board: PlainBoard, item: TSchema, paged: boolean) =>
    app.get(`/${board}`, ({ query }) => jsonResponse(s.market.plain(board, paged ? pageSize((query as { page_size?: string }).page_size) : Number.MAX_SAFE_INTEGER)), {
      query: paged ? t.Object({ page_size: pageQuery.page_size }) : t.Object({}),
      response: { 200: t.Object({ data: t.Array(item) }) },
      detail: { summary: board, description: DESCRIPTIONS[board] },
    })
  plain('trending', BOARD_ITEMS.trending, true)
  plain('top-feeds', BOARD_ITEMS['top-feeds'], true)
  plain('category-stats', BOARD_ITEMS['category-stats'], false)
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
    response: { 200: Page(RecentEntry), ...errors(422) },
    detail: { summary: 'recent-entries', description: 'Newest active entries of active feeds, cursor paginated.' },
  })
}
