// /v1/leaderboards: eight public rankings, served from the last snapshot (recent-entries is live: its pages are
// kept as JSON text until the database next changes, see recentEntriesJson).
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { entryBody } from './entries.ts'
import { BOARDS, PAGED_BOARDS, PERIOD_BOARDS, WHOLE_BOARDS, Page, RecentEntry, type PeriodBoard, type PlainBoard } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { nowSeconds } from '../lib/clock.ts'
import { jsonResponse } from '../edge/json-response.ts'
import type { RecentEntry as RecentRow } from '../store/stats.ts'

const Period = t.Optional(t.String({ description: '1d, 7d, 30d or all (default)' }))

export const leaderboardRoutes = (s: Services) => {
  const app = new Elysia({ prefix: '/v1/leaderboards', tags: ['Leaderboards'] })
  const withPeriod = (board: PeriodBoard) =>
    app.get(
      `/${board}`,
      ({ query }) => {
        const period = s.stats.period(query.period)
        return jsonResponse(s.stats.byPeriod(board, period, pageSize(query.page_size)))
      },
      {
        query: t.Object({ page_size: pageQuery.page_size, period: Period }),
        response: { 200: t.Object({ data: t.Array(BOARDS[board].item), period: t.String({ description: 'the period of this board' }) }) },
        detail: { summary: board, description: `${BOARDS[board].description} page_size 1..100 (default 20).` },
      },
    )
  for (const board of PERIOD_BOARDS) withPeriod(board)
  const plain = (board: PlainBoard, paged: boolean) =>
    app.get(
      `/${board}`,
      ({ query }) =>
        jsonResponse(s.stats.plain(board, paged ? pageSize((query as { page_size?: string }).page_size) : Number.MAX_SAFE_INTEGER)),
      {
        query: paged ? t.Object({ page_size: pageQuery.page_size }) : t.Object({}),
        response: { 200: t.Object({ data: t.Array(BOARDS[board].item) }) },
        detail: { summary: board, description: BOARDS[board].description },
      },
    )
  for (const board of PAGED_BOARDS) plain(board, true)
  for (const board of WHOLE_BOARDS) plain(board, false)
  return app.get(
    '/recent-entries',
    async ({ query }) => jsonResponse(await recentEntriesJson(s, pageSize(query.page_size), query.page_token)),
    {
      query: t.Object(pageQuery),
      response: { 200: Page(RecentEntry), ...errors(422) },
      detail: { summary: 'recent-entries', description: 'Newest active entries of active feeds, cursor paginated.' },
    },
  )
}

/** A page of recent entries: its rows, its JSON text as of when it was made, and the second that text expires. */
interface RecentPage {
  rows: RecentRow[]
  pagination: ReturnType<typeof page>['pagination']
  body: string
  until: number
}

const SCOPE = 'recent-entries'

async function recentPage(s: Services, limit: number, token: string | undefined, now: number): Promise<RecentPage> {
  const rows = await s.stats.recentEntries(s.pages.decode<string>(SCOPE, token), limit + 1)
  const result = page(rows, limit, s.pages, SCOPE, (last) => last.id)
  return render({ rows: result.data, pagination: result.pagination, body: '', until: 0 }, now)
}

/** A recent entry on the wire: the entry, then where it is placed. */
const recentEntryBody = (e: RecentRow, now: number): RecentEntry => ({
  ...entryBody(e, now),
  feed_name: e.feed_name,
  feed_owner_id: e.feed_owner_id,
  owner_wallet: e.owner_wallet,
  category_name: e.category_name,
})

/** An entry's is_free and price change when its early access ends: the text holds until the first such end. */
function render(p: RecentPage, now: number): RecentPage {
  p.body = JSON.stringify({
    data: p.rows.map((e) => recentEntryBody(e, now)),
    pagination: p.pagination,
  })
  p.until = Infinity
  for (const e of p.rows) if (!e.is_free && e.expires_at !== null && e.expires_at > now) p.until = Math.min(p.until, e.expires_at)
  return p
}

const recentKey = (limit: number, token: string | undefined) => `${SCOPE}:${limit}:${token ?? ''}`

/** The held page's text, re-rendered in place from its rows (no query) once an early access on it has ended. */
function current(p: RecentPage, now: number): string {
  if (now >= p.until) render(p, now)
  return p.body
}

/**
 * GET /v1/leaderboards/recent-entries as JSON text: a live read, each page kept per (page size, page token) until
 * the database next changes, so a new entry shows at once and a deleted one leaves at once, while repeated reads
 * cost a lookup instead of a four-table join and 100 serialised entries.
 */
export async function recentEntriesJson(s: Services, limit: number, token: string | undefined): Promise<string> {
  const now = nowSeconds()
  return current(
    await s.cached.get(
      recentKey(limit, token),
      () => recentPage(s, limit, token, now),
      (held) => held.body.length * 2,
    ),
    now,
  )
}

/** The same text when the memo holds the page (the hot-read path answers from it). */
export function heldRecentEntriesJson(s: Services, limit: number, token: string | undefined): string | undefined {
  const p = s.cached.peek<RecentPage>(recentKey(limit, token))
  return p && current(p, nowSeconds())
}
