// Leaderboard items. Counts and amounts are decimal strings where the hosted service sends them so.
import { Type as t, type Static } from '@sinclair/typebox'
import { CountText, Money, Nullable, UnixSeconds } from './common.ts'
import { Entry } from './entry.ts'

const S = t.String()
const NS = Nullable(t.String())
const N = t.Integer()
const Tags = t.Array(t.String())
const Rank = CountText('1 = first')

const feedRef = {
  owner_id: S,
  owner_username: NS,
  owner_wallet: S,
  category_id: NS,
  category_name: NS,
  description: NS,
  image_cid: NS,
  is_active: t.Boolean(),
  tags: Tags,
  total_entries: N,
}
const feedSales = {
  rank: Rank,
  feed_id: S,
  feed_name: S,
  id: t.String({ description: 'the same as feed_id (read by the SDK)' }),
  name: t.String({ description: 'the same as feed_name' }),
  feed: t.String({ description: 'the same as feed_name (read by newer SDK versions)' }),
  ...feedRef,
  total_purchases: CountText(),
  total_revenue: Money(),
  unique_buyers: CountText(),
}

export const MostPopularItem = t.Object({
  ...feedSales,
  avg_revenue_per_purchase: Money(),
  created_at: UnixSeconds(),
  updated_at: UnixSeconds(),
})
export const TopRevenueItem = t.Object({ ...feedSales, feed_created_at: UnixSeconds(), feed_updated_at: UnixSeconds() })
export const TopProviderItem = t.Object({
  rank: Rank,
  user_id: S,
  username: NS,
  wallet_address: S,
  total_feeds: CountText(),
  total_entries: CountText(),
  total_purchases: CountText(),
  total_revenue: Money(),
  unique_buyers: CountText(),
  joined_at: UnixSeconds(),
})
export const TopBuyerItem = t.Object({
  rank: Rank,
  user_id: S,
  username: NS,
  wallet_address: S,
  total_purchases: CountText(),
  total_spent: Money(),
  unique_entries_purchased: CountText(),
  unique_feeds_purchased_from: CountText(),
  joined_at: UnixSeconds(),
})
export const TrendingItem = t.Object({
  rank: Rank,
  id: S,
  owner_id: S,
  owner_wallet: S,
  owner_username: NS,
  category_id: NS,
  category_name: NS,
  name: S,
  description: NS,
  image_cid: NS,
  is_active: t.Boolean(),
  total_entries: N,
  total_purchases: N,
  total_revenue: Money(),
  tags: Tags,
  created_at: UnixSeconds(),
  updated_at: UnixSeconds(),
  purchases_last_7d: CountText(),
  revenue_last_7d: Money(),
  unique_buyers_last_7d: CountText(),
})
export const TopFeedItem = t.Object({
  id: S,
  owner_id: S,
  category_id: NS,
  name: S,
  description: NS,
  image_cid: NS,
  is_active: t.Boolean(),
  total_entries: N,
  total_purchases: N,
  total_revenue: Money(),
  tags: Tags,
  created_at: UnixSeconds(),
  updated_at: UnixSeconds(),
  owner_wallet: S,
  owner_username: NS,
  category_name: NS,
})
export const CategoryStatsItem = t.Object({
  category_id: S,
  category_name: S,
  category_description: NS,
  category_icon_url: NS,
  total_feeds: CountText(),
  total_providers: CountText(),
  total_entries: CountText(),
  total_purchases: CountText(),
  total_revenue: Money(),
  unique_buyers: CountText(),
  avg_purchase_amount: Money(),
})
export const RecentEntry = t.Composite([
  t.Omit(Entry, ['content_url']),
  t.Object({ feed_name: S, feed_owner_id: S, owner_wallet: S, category_name: NS }),
])
export type RecentEntry = Static<typeof RecentEntry>

/**
 * Every snapshot leaderboard (GET /v1/leaderboards/{name}), the one list the routes, the hot reads and the builder
 * read: its items, and how it is ranked: over a period (?period=1d|7d|30d|all), paged without one, or whole
 * (every item, no paging). recent-entries is not here: it is a live listing, not a ranking of a snapshot.
 */
export const BOARDS = {
  'most-popular': { item: MostPopularItem, ranked: 'period', description: 'Active feeds by purchases in the period.' },
  'top-revenue': { item: TopRevenueItem, ranked: 'period', description: 'Active feeds by revenue in the period.' },
  'top-providers': { item: TopProviderItem, ranked: 'period', description: 'Creators by revenue from their active feeds in the period.' },
  'top-buyers': { item: TopBuyerItem, ranked: 'period', description: 'Buyers by amount spent in the period.' },
  trending: { item: TrendingItem, ranked: 'paged', description: 'Active feeds by revenue in the last 7 days.' },
  'top-feeds': { item: TopFeedItem, ranked: 'paged', description: 'Active feeds by number of entries.' },
  'category-stats': { item: CategoryStatsItem, ranked: 'whole', description: 'Every active category, over its active feeds.' },
} as const
export type BoardName = keyof typeof BOARDS
type RankedBy<R extends string> = { [K in BoardName]: (typeof BOARDS)[K]['ranked'] extends R ? K : never }[BoardName]
export type PeriodBoard = RankedBy<'period'>
/** A board ranked without a period (paged or whole). */
export type PlainBoard = RankedBy<'paged' | 'whole'>
const boardsRanked = <R extends string>(ranked: R) =>
  (Object.keys(BOARDS) as BoardName[]).filter((name) => BOARDS[name].ranked === ranked) as RankedBy<R>[]
export const PERIOD_BOARDS = boardsRanked('period')
export const PAGED_BOARDS = boardsRanked('paged')
export const WHOLE_BOARDS = boardsRanked('whole')
export type BoardItem<K extends BoardName> = Static<(typeof BOARDS)[K]['item']>
