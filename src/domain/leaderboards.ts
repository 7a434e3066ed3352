// The leaderboards, built from the tallies in one consistent read (off the event loop, into an immutable snapshot:
// readers always see a finished one). Only the first BOARD_SIZE items of each board are kept: a page is at most
// that long.
//
// Rules (where the seed is silent):
// - Feed leaderboards count active feeds only and rank those with activity in the period (purchases for
//   most-popular and trending, revenue for top-revenue, entries for top-feeds). Ties: more purchases, then the
//   older feed, then the smaller id.
// - top-providers: feed owners by revenue from their active feeds in the period; top-buyers: payers by amount
//   spent in the period (then purchases, then the earlier wallet).
// - category-stats: active categories over their active feeds, all time, by revenue then name.
// - Periods are rolling: 1d is the last 86,400 seconds.
import type { MarketFeed, MarketWallet, Sales, StatsStore } from '../store/stats.ts'
import { compareBig, floorDiv, PERIODS, type Period } from './tallies.ts'
import type { BoardItem, PeriodBoard, PlainBoard } from '../models/leaderboard.ts'

export const BOARD_SIZE = 100

export type { PeriodBoard, PlainBoard }
export type BoardKey = `${PeriodBoard}:${Period}` | PlainBoard
type ItemOf<K extends BoardKey> = K extends `${infer B extends PeriodBoard}:${string}`
  ? BoardItem<B>
  : K extends PlainBoard
    ? BoardItem<K>
    : never
/** Every board's items, as the models document them. */
export type Leaderboards = { [K in BoardKey]: ItemOf<K>[] }

const tags = (json: string) => JSON.parse(json) as string[]
const periods = Object.keys(PERIODS) as Period[]

interface Figures {
  purchases: number
  amount: bigint
}
const figuresOf = (rows: Sales[]) => new Map(rows.map((r) => [r.key, { purchases: r.purchases, amount: BigInt(r.amount) }]))

function byAge(a: { created_at: number; id: string }, b: { created_at: number; id: string }): number {
  return a.created_at - b.created_at || (a.id < b.id ? -1 : 1)
}

/** Run it in one snapshot (Records.snapshot): every board reads the same moment. */
export async function buildLeaderboards(store: StatsStore, now: number): Promise<Leaderboards> {
  const feeds = await store.feeds()
  const active = feeds.filter((f) => f.is_active === 1)
  const wallets = await store.wallets()
  const walletById = new Map(wallets.map((w) => [w.id, w]))
  const walletByAddress = new Map(wallets.map((w) => [w.address_lc, w]))
  const sinceOf = (p: Period) => (p === 'all' ? null : now - PERIODS[p])
  const boards = {} as Leaderboards

  const rankFeeds = (sales: Map<string, Figures>, primary: 'purchases' | 'amount') =>
    active
      .filter((f) => sales.has(f.id))
      .sort((a, b) => {
        const x = sales.get(a.id)!
        const y = sales.get(b.id)!
        const first = primary === 'purchases' ? y.purchases - x.purchases : compareBig(x.amount, y.amount)
        return first || y.purchases - x.purchases || byAge(a, b)
      })
      .slice(0, BOARD_SIZE)
  const feedCommon = (f: MarketFeed) => ({
    owner_id: f.owner_id,
    owner_username: f.owner_username,
    owner_wallet: f.owner_wallet,
    category_id: f.category_id,
    category_name: f.category_name,
    description: f.description,
    image_cid: f.image_cid,
    is_active: f.is_active === 1,
    tags: tags(f.tags),
    total_entries: f.total_entries,
  })

  const activeByOwner = new Map<string, { feeds: number; entries: number }>()
  for (const f of active) {
    const o = activeByOwner.get(f.owner_id) ?? { feeds: 0, entries: 0 }
    o.feeds++
    o.entries += f.total_entries
    activeByOwner.set(f.owner_id, o)
  }

  for (const p of periods) {
    const since = sinceOf(p)
    const from = since ?? Number.MIN_SAFE_INTEGER
    const sales = figuresOf(await store.feedSales(since))
    const byRevenue = rankFeeds(sales, 'amount')
    const byPurchases = rankFeeds(sales, 'purchases')
    // A feed is on several boards of a period: its buyers are counted once.
    const buyers = new Map<string, string>()
    for (const f of [...byRevenue, ...byPurchases]) if (!buyers.has(f.id)) buyers.set(f.id, String(await store.feedBuyers(f.id, from)))
    const buyersOf = (feedId: string) => buyers.get(feedId)!
    const feedItem = (f: MarketFeed, i: number) => {
      const s = sales.get(f.id)!
      // id, name and feed (the name) beside feed_id and feed_name: versions of the official SDK read these.
      return {
        rank: String(i + 1),
        feed_id: f.id,
        feed_name: f.name,
        id: f.id,
        name: f.name,
        feed: f.name,
        ...feedCommon(f),
        total_purchases: String(s.purchases),
        total_revenue: s.amount.toString(),
        unique_buyers: buyersOf(f.id),
      }
    }
    boards[`most-popular:${p}`] = byPurchases.map((f, i) => {
      const s = sales.get(f.id)!
      return {
        ...feedItem(f, i),
        avg_revenue_per_purchase: floorDiv(s.amount, s.purchases),
        created_at: f.created_at,
        updated_at: f.updated_at,
      }
    })
    boards[`top-revenue:${p}`] = byRevenue.map((f, i) => ({
      ...feedItem(f, i),
      feed_created_at: f.created_at,
      feed_updated_at: f.updated_at,
    }))
    if (p === '7d') {
      boards.trending = byRevenue.map((f, i) => {
        const s = sales.get(f.id)!
        return {
          rank: String(i + 1),
          id: f.id,
          owner_id: f.owner_id,
          owner_wallet: f.owner_wallet,
          owner_username: f.owner_username,
          category_id: f.category_id,
          category_name: f.category_name,
          name: f.name,
          description: f.description,
          image_cid: f.image_cid,
          is_active: true,
          total_entries: f.total_entries,
          total_purchases: f.total_purchases,
          total_revenue: f.total_revenue,
          tags: tags(f.tags),
          created_at: f.created_at,
          updated_at: f.updated_at,
          purchases_last_7d: String(s.purchases),
          revenue_last_7d: s.amount.toString(),
          unique_buyers_last_7d: buyersOf(f.id),
        }
      })
    }

    // Providers: revenue from their active feeds.
    const providers = new Map<string, Figures>()
    for (const f of active) {
      const s = sales.get(f.id)
      if (!s) continue
      const o = providers.get(f.owner_id) ?? { purchases: 0, amount: 0n }
      o.purchases += s.purchases
      o.amount += s.amount
      providers.set(f.owner_id, o)
    }
    const topProviders = [...providers.entries()]
      .map(([ownerId, t]) => ({ wallet: walletById.get(ownerId)!, t }))
      .sort((a, b) => compareBig(a.t.amount, b.t.amount) || b.t.purchases - a.t.purchases || byAge(a.wallet, b.wallet))
      .slice(0, BOARD_SIZE)
    const providerBuyers = new Map<string, number>()
    for (const { wallet } of topProviders) providerBuyers.set(wallet.id, await store.ownerBuyers(wallet.id, from))
    boards[`top-providers:${p}`] = topProviders.map(({ wallet, t }, i) => ({
      rank: String(i + 1),
      user_id: wallet.id,
      username: wallet.username,
      wallet_address: wallet.address,
      total_feeds: String(activeByOwner.get(wallet.id)?.feeds ?? 0),
      total_entries: String(activeByOwner.get(wallet.id)?.entries ?? 0),
      total_purchases: String(t.purchases),
      total_revenue: t.amount.toString(),
      unique_buyers: String(providerBuyers.get(wallet.id)),
      joined_at: wallet.created_at,
    }))

    const topBuyers = [...figuresOf(await store.buyerSales(since)).entries()]
      .map(([address, t]) => ({ wallet: walletByAddress.get(address), t }))
      .filter((x): x is { wallet: MarketWallet; t: Figures } => x.wallet !== undefined)
      .sort((a, b) => compareBig(a.t.amount, b.t.amount) || b.t.purchases - a.t.purchases || byAge(a.wallet, b.wallet))
      .slice(0, BOARD_SIZE)
    const reaches = new Map<string, { feeds: number; entries: number }>()
    for (const { wallet } of topBuyers) reaches.set(wallet.address_lc, await store.buyerReach(wallet.address_lc, from))
    boards[`top-buyers:${p}`] = topBuyers.map(({ wallet, t }, i) => {
      const reach = reaches.get(wallet.address_lc)!
      return {
        rank: String(i + 1),
        user_id: wallet.id,
        username: wallet.username,
        wallet_address: wallet.address,
        total_purchases: String(t.purchases),
        total_spent: t.amount.toString(),
        unique_entries_purchased: String(reach.entries),
        unique_feeds_purchased_from: String(reach.feeds),
        joined_at: wallet.created_at,
      }
    })
  }

  boards['top-feeds'] = active
    .filter((f) => f.total_entries > 0)
    .sort((a, b) => b.total_entries - a.total_entries || b.total_purchases - a.total_purchases || byAge(a, b))
    .slice(0, BOARD_SIZE)
    .map((f) => ({
      id: f.id,
      owner_id: f.owner_id,
      category_id: f.category_id,
      name: f.name,
      description: f.description,
      image_cid: f.image_cid,
      is_active: true,
      total_entries: f.total_entries,
      total_purchases: f.total_purchases,
      total_revenue: f.total_revenue,
      tags: tags(f.tags),
      created_at: f.created_at,
      updated_at: f.updated_at,
      owner_wallet: f.owner_wallet,
      owner_username: f.owner_username,
      category_name: f.category_name,
    }))

  const byCategory = new Map((await store.categoryFigures()).map((c) => [c.category_id, c]))
  boards['category-stats'] = (await store.categories())
    .filter((c) => c.is_active === 1)
    .map((c) => {
      const t = byCategory.get(c.id)
      const revenue = BigInt(t?.revenue ?? 0)
      return {
        category_id: c.id,
        category_name: c.name,
        category_description: c.description,
        category_icon_url: c.icon_url,
        total_feeds: String(t?.feeds ?? 0),
        total_providers: String(t?.providers ?? 0),
        total_entries: String(t?.entries ?? 0),
        total_purchases: String(t?.purchases ?? 0),
        total_revenue: revenue.toString(),
        unique_buyers: String(t?.buyers ?? 0),
        avg_purchase_amount: floorDiv(revenue, t?.purchases ?? 0),
      }
    })
    .sort((a, b) => compareBig(BigInt(a.total_revenue), BigInt(b.total_revenue)) || a.category_name.localeCompare(b.category_name))
  return boards
}
