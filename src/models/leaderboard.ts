// Leaderboard items. Counts and amounts are decimal strings where the hosted service sends them so.
import { Type as t, type Static } from '@sinclair/typebox'
import { CountText, Money, Nullable, UnixSeconds } from './common.ts'
import { Entry } from './entry.ts'

const S = t.String()
const NS = Nullable(t.String())
const N = t.Integer()
const Tags = t.Array(t.String())
const Rank = CountText('1 = first')

const feedRef = { owner_id: S, owner_username: NS, owner_wallet: S, category_id: NS, category_name: NS, description: NS, image_cid: NS, is_active: t.Boolean(), tags: Tags, total_entries: N }
const feedSales = { rank: Rank, feed_id: S, feed_name: S, id: t.String({ description: 'the same as feed_id (read by the SDK)' }), name: t.String({ description: 'the same as feed_name' }), feed: t.String({ description: 'the same as feed_name (read by newer SDK versions)' }), ...feedRef, total_purchases: CountText(), total_revenue: Money(), unique_buyers: CountText() }

export const MostPopularItem = t.Object({ ...feedSales, avg_revenue_per_purchase: Money(), created_at: UnixSeconds(), updated_at: UnixSeconds() })
export const TopRevenueItem = t.Object({ ...feedSales, feed_created_at: UnixSeconds(), feed_updated_at: UnixSeconds() })
export const TopProviderItem = t.Object({ rank: Rank, user_id: S, username: NS, wallet_address: S, total_feeds: CountText(), total_entries: CountText(), total_purchases: CountText(), total_revenue: Money(), unique_buyers: CountText(), joined_at: UnixSeconds() })
export const TopBuyerItem = t.Object({ rank: Rank, user_id: S, username: NS, wallet_address: S, total_purchases: CountText(), total_spent: Money(), unique_entries_purchased: CountText(), unique_feeds_purchased_from: CountText(), joined_at: UnixSeconds() })
export const TrendingItem = t.Object({
  rank: Rank, id: S, owner_id: S, owner_wallet: S, owner_username: NS, category_id: NS, category_name: NS, name: S, description: NS, image_cid: NS,
  is_active: t.Boolean(), total_entries: N, total_purchases: N, total_revenue: Money(), tags: Tags, created_at: UnixSeconds(), updated_at: UnixSeconds(),
  purchases_last_7d: CountText(), revenue_last_7d: Money(), unique_buyers_last_7d: CountText(),
})
export const TopFeedItem = t.Object({
  id: S, owner_id: S, category_id: NS, name: S, description: NS, image_cid: NS, is_active: t.Boolean(), total_entries: N, total_purchases: N,
  total_revenue: Money(), tags: Tags, created_at: UnixSeconds(), updated_at: UnixSeconds(), owner_wallet: S, owner_username: NS, category_name: NS,
})
export const CategoryStatsItem = t.Object({
  category_id: S, category_name: S, category_description: NS, category_icon_url: NS, total_feeds: CountText(), total_providers: CountText(), total_entries: CountText(),
  total_purchases: CountText(), total_revenue: Money(), unique_buyers: CountText(), avg_purchase_amount: Money(),
})
export const RecentEntry = t.Composite([t.Omit(Entry, ['content_url']), t.Object({ feed_name: S, feed_owner_id: S, owner_wallet: S, category_name: NS })])
export type RecentEntry = Static<typeof RecentEntry>

export const BOARD_ITEMS = {
  'most-popular': MostPopularItem,
  'top-revenue': TopRevenueItem,
  'top-providers': TopProviderItem,
  'top-buyers': TopBuyerItem,
  trending: TrendingItem,
  'top-feeds': TopFeedItem,
  'category-stats': CategoryStatsItem,
}
export type BoardItem<K extends keyof typeof BOARD_ITEMS> = Static<(typeof BOARD_ITEMS)[K]>
