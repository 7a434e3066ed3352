// The leaderboards, built from the ledger tallies of one snapshot pass (see the rules in market.ts).
import type { MarketFeed, MarketStore, MarketWallet } from '../store/market.ts'
import { compareBig, floorDiv, PERIODS, tally, type BuyerTally, type Period, type Tally } from './tallies.ts'

export interface Leaderboards {
  mostPopular: Record<Period, unknown[]>
  topRevenue: Record<Period, unknown[]>
  topProviders: Record<Period, unknown[]>
  topBuyers: Record<Period, unknown[]>
  trending: unknown[]
  topFeeds: unknown[]
  categoryStats: unknown[]
}

const tags = (json: string) => JSON.parse(json) as string[]

function byActivity(a: MarketFeed, b: MarketFeed): number {
  return a.created_at - b.created_at || (a.id < b.id ? -1 : 1)
}


export function buildLeaderboards(
  feeds: MarketFeed[],
  wallets: MarketWallet[],
  walletByAddress: Map<string, MarketWallet>,
  store: MarketStore,
  feedTallies: Record<Period, Map<string, Tally>>,
  providerTallies: Record<Period, Map<string, Tally>>,
  buyerTallies: Record<Period, Map<string, BuyerTally>>,
): Leaderboards {
  const active = feeds.filter((f) => f.is_active === 1)
  const walletById = new Map(wallets.map((w) => [w.id, w]))
  const periods = Object.keys(PERIODS) as Period[]
  const per = <T>(fn: (p: Period) => T) => Object.fromEntries(periods.map((p) => [p, fn(p)])) as Record<Period, T>
  const ranked = (feedsWith: MarketFeed[], t: Map<string, Tally>, primary: 'purchases' | 'revenue') =>
    feedsWith
      .filter((f) => t.has(f.id))
      .sort((a, b) => {
        const x = t.get(a.id)!
        const y = t.get(b.id)!
        // By the ranking's own measure, then more purchases, then the older feed.
        const first = primary === 'purchases' ? y.purchases - x.purchases : compareBig(x.revenue, y.revenue)
        return first || y.purchases - x.purchases || byActivity(a, b)
      })
  const feedCommon = (f: MarketFeed) => ({
    owner_id: f.owner_id, owner_username: f.owner_username, owner_wallet: f.owner_wallet, category_id: f.category_id, category_name: f.category_name,
    description: f.description, image_cid: f.image_cid, is_active: f.is_active === 1, tags: tags(f.tags), total_entries: f.total_entries,
  })

  const mostPopular = per((p) => ranked(active, feedTallies[p], 'purchases').map((f, i) => {
    const t = feedTallies[p].get(f.id)!
    return {
      rank: String(i + 1), feed_id: f.id, feed_name: f.name, ...feedCommon(f),
      total_purchases: String(t.purchases), total_revenue: t.revenue.toString(), unique_buyers: String(t.buyers.size),
      avg_revenue_per_purchase: floorDiv(t.revenue, t.purchases), created_at: f.created_at, updated_at: f.updated_at,
    }
  }))
  const topRevenue = per((p) => ranked(active, feedTallies[p], 'revenue').map((f, i) => {
    const t = feedTallies[p].get(f.id)!
    return {
      rank: String(i + 1), feed_id: f.id, feed_name: f.name, ...feedCommon(f),
      total_purchases: String(t.purchases), total_revenue: t.revenue.toString(), unique_buyers: String(t.buyers.size),
      feed_created_at: f.created_at, feed_updated_at: f.updated_at,
    }
  }))
  const trending = ranked(active, feedTallies['7d'], 'revenue').map((f, i) => {
    const t = feedTallies['7d'].get(f.id)!
    return {
      rank: String(i + 1), id: f.id, owner_id: f.owner_id, owner_wallet: f.owner_wallet, owner_username: f.owner_username,
      category_id: f.category_id, category_name: f.category_name, name: f.name, description: f.description, image_cid: f.image_cid,
      is_active: true, total_entries: f.total_entries, total_purchases: f.total_purchases, total_revenue: f.total_revenue, tags: tags(f.tags),
      created_at: f.created_at, updated_at: f.updated_at,
      purchases_last_7d: String(t.purchases), revenue_last_7d: t.revenue.toString(), unique_buyers_last_7d: String(t.buyers.size),
    }
  })
  const topFeeds = active
    .filter((f) => f.total_entries > 0)
    .sort((a, b) => b.total_entries - a.total_entries || b.total_purchases - a.total_purchases || byActivity(a, b))
    .map((f) => ({
      id: f.id, owner_id: f.owner_id, category_id: f.category_id, name: f.name, description: f.description, image_cid: f.image_cid,
      is_active: true, total_entries: f.total_entries, total_purchases: f.total_purchases, total_revenue: f.total_revenue, tags: tags(f.tags),
      created_at: f.created_at, updated_at: f.updated_at, owner_wallet: f.owner_wallet, owner_username: f.owner_username, category_name: f.category_name,
    }))

  const activeByOwner = new Map<string, { feeds: number; entries: number }>()
  for (const f of active) {
    const o = activeByOwner.get(f.owner_id) ?? { feeds: 0, entries: 0 }
    o.feeds++
    o.entries += f.total_entries
    activeByOwner.set(f.owner_id, o)
  }
  const topProviders = per((p) => [...providerTallies[p].entries()]
    .map(([ownerId, t]) => ({ wallet: walletById.get(ownerId)!, t }))
    .sort((a, b) => compareBig(a.t.revenue, b.t.revenue) || b.t.purchases - a.t.purchases || a.wallet.created_at - b.wallet.created_at || (a.wallet.id < b.wallet.id ? -1 : 1))
    .map(({ wallet, t }, i) => ({
      rank: String(i + 1), user_id: wallet.id, username: wallet.username, wallet_address: wallet.address,
      total_feeds: String(activeByOwner.get(wallet.id)?.feeds ?? 0), total_entries: String(activeByOwner.get(wallet.id)?.entries ?? 0),
      total_purchases: String(t.purchases), total_revenue: t.revenue.toString(), unique_buyers: String(t.buyers.size), joined_at: wallet.created_at,
    })))
  const topBuyers = per((p) => [...buyerTallies[p].entries()]
    .map(([address, b]) => ({ wallet: walletByAddress.get(address), b }))
    .filter((x): x is { wallet: MarketWallet; b: BuyerTally } => x.wallet !== undefined)
    .sort((a, b) => compareBig(a.b.spent, b.b.spent) || b.b.purchases - a.b.purchases || a.wallet.created_at - b.wallet.created_at || (a.wallet.id < b.wallet.id ? -1 : 1))
    .map(({ wallet, b }, i) => ({
      rank: String(i + 1), user_id: wallet.id, username: wallet.username, wallet_address: wallet.address,
      total_purchases: String(b.purchases), total_spent: b.spent.toString(), unique_entries_purchased: String(b.entries.size),
      unique_feeds_purchased_from: String(b.feeds.size), joined_at: wallet.created_at,
    })))

  const categoryStats = store.categories()
    .filter((c) => c.is_active === 1)
    .map((c) => {
      const inCategory = active.filter((f) => f.category_id === c.id)
      const t = tally()
      for (const f of inCategory) {
        const ft = feedTallies.all.get(f.id)
        if (!ft) continue
        t.purchases += ft.purchases
        t.revenue += ft.revenue
        ft.buyers.forEach((buyer) => t.buyers.add(buyer))
      }
      return {
        category_id: c.id, category_name: c.name, category_description: c.description, category_icon_url: c.icon_url,
        total_feeds: String(inCategory.length), total_providers: String(new Set(inCategory.map((f) => f.owner_id)).size),
        total_entries: String(inCategory.reduce((n, f) => n + f.total_entries, 0)), total_purchases: String(t.purchases),
        total_revenue: t.revenue.toString(), unique_buyers: String(t.buyers.size), avg_purchase_amount: floorDiv(t.revenue, t.purchases),
      }
    })
    .sort((a, b) => compareBig(BigInt(a.total_revenue), BigInt(b.total_revenue)) || a.category_name.localeCompare(b.category_name))

  return { mostPopular, topRevenue, topProviders, topBuyers, trending, topFeeds, categoryStats }
}
