// Wallet statistics and leaderboards, computed in one pass over the ledger into immutable snapshots. Readers
// always see a finished snapshot; a rebuild swaps it in whole.
//
// Rules (where the seed is silent):
// - Feed leaderboards count active feeds only and rank those with activity in the period (purchases for
//   most-popular and trending, revenue for top-revenue, entries for top-feeds). Ties: more purchases, then the
//   older feed, then the smaller id.
// - top-providers: feed owners by revenue from their active feeds in the period; top-buyers: payers by amount
//   spent in the period (then purchases, then the earlier wallet).
// - category-stats: active categories over their active feeds, all time, by revenue then name.
// - Wallet ranks: competition ranking over all wallets (1 = highest, ties share a rank).
import type { MarketStore, MarketWallet } from '../store/market.ts'
import { bump, floorDiv, PERIODS, type BuyerTally, type Period, type Tally } from './tallies.ts'
import { buildLeaderboards, type Leaderboards } from './leaderboards.ts'
import { usdcDecimal } from '../lib/money.ts'
import { nowSeconds } from '../lib/clock.ts'

export { PERIODS, type Period } from './tallies.ts'

export interface WalletStats {
  wallet_id: string
  address: string
  network: string
  generated_at: number
  content_stats: { total_feeds: number; total_entries: number; free_entries: number; paid_entries: number; total_content_size: number }
  revenue_stats: { total_revenue: string; revenue_usdc: string; unique_buyers: number; total_purchases_received: number; average_entry_price: string }
  purchase_stats: { total_spent: string; spent_usdc: string; unique_sellers: number; total_purchases_made: number; average_purchase_amount: string }
  rankings: { revenue_rank: number; content_rank: number; buyer_rank: number }
  activity: { first_activity: number; last_activity: number; active_days: number }
  // The SDK's flat names, side by side.
  total_feeds_created: number
  total_entries_published: number
  total_revenue_earned: string
  total_items_sold: number
  unique_buyers_count: number
  total_purchases_made: number
  total_amount_spent: string
  unique_feeds_purchased_from: number
  revenue_rank: number
  purchases_rank: number
  last_calculated_at: number
  created_at: number
  updated_at: number
}

interface WalletFigures {
  wallet: MarketWallet
  content: WalletStats['content_stats']
  revenue: bigint
  sold: number
  buyers: number
  averageEntryPrice: string
  spent: bigint
  bought: number
  sellers: number
  feedsBoughtFrom: number
  activity: WalletStats['activity']
}

export interface Snapshot {
  generatedAt: number
  figures: Map<string, WalletFigures>
  leaderboards: Leaderboards
}

export type Ranks = Map<string, { revenue_rank: number; content_rank: number; buyer_rank: number }>

/** Competition ranking: equal values share a rank, the next rank skips. */
function competitionRanks<T>(items: T[], value: (t: T) => bigint, id: (t: T) => string): Map<string, number> {
  const sorted = [...items].sort((a, b) => (value(b) > value(a) ? 1 : value(b) < value(a) ? -1 : 0))
  const ranks = new Map<string, number>()
  sorted.forEach((item, i) => {
    const prev = sorted[i - 1]
    ranks.set(id(item), prev !== undefined && value(prev) === value(item) ? ranks.get(id(prev))! : i + 1)
  })
  return ranks
}

export function buildSnapshot(store: MarketStore, now = nowSeconds()): Snapshot {
  const feeds = store.feeds()
  const wallets = store.wallets()
  const walletByAddress = new Map(wallets.map((w) => [w.address.toLowerCase(), w]))
  const feedById = new Map(feeds.map((f) => [f.id, f]))
  const periods = Object.keys(PERIODS) as Period[]

  // The one pass over the ledger.
  const feedTallies = Object.fromEntries(periods.map((p) => [p, new Map<string, Tally>()])) as Record<Period, Map<string, Tally>>
  const providerTallies = Object.fromEntries(periods.map((p) => [p, new Map<string, Tally>()])) as Record<Period, Map<string, Tally>>
  const buyerTallies = Object.fromEntries(periods.map((p) => [p, new Map<string, BuyerTally>()])) as Record<Period, Map<string, BuyerTally>>
  const received = new Map<string, Tally>() // by recipient address, all time, every sale
  const sellersOf = new Map<string, Set<string>>()
  for (const sale of store.sales()) {
    const amount = BigInt(sale.amount)
    const age = now - sale.created_at
    const feed = sale.feed_id ? feedById.get(sale.feed_id) : undefined
    bump(received, sale.pay_to_lc, amount, sale.payer_lc)
    if (!sellersOf.has(sale.payer_lc)) sellersOf.set(sale.payer_lc, new Set())
    sellersOf.get(sale.payer_lc)!.add(sale.pay_to_lc)
    for (const p of periods) {
      if (age > PERIODS[p]) continue
      let b = buyerTallies[p].get(sale.payer_lc)
      if (!b) buyerTallies[p].set(sale.payer_lc, (b = { purchases: 0, spent: 0n, entries: new Set(), feeds: new Set() }))
      b.purchases++
      b.spent += amount
      if (sale.entry_id) b.entries.add(sale.entry_id)
      if (sale.feed_id) b.feeds.add(sale.feed_id)
      if (feed?.is_active) {
        bump(feedTallies[p], feed.id, amount, sale.payer_lc)
        bump(providerTallies[p], feed.owner_id, amount, sale.payer_lc)
      }
    }
  }

  // Wallet figures.
  const content = new Map(store.content(now).map((c) => [c.owner_id, c]))
  const activity = new Map(store.activity().map((a) => [a.wallet_id, a]))
  const figures = new Map<string, WalletFigures>()
  for (const wallet of wallets) {
    const address = wallet.address.toLowerCase()
    const c = content.get(wallet.id)
    const r = received.get(address)
    const b = buyerTallies.all.get(address)
    const a = activity.get(wallet.id)
    figures.set(wallet.id, {
      wallet,
      content: { total_feeds: c?.feeds ?? 0, total_entries: c?.entries ?? 0, free_entries: c?.free_entries ?? 0, paid_entries: c?.paid_entries ?? 0, total_content_size: c?.content_size ?? 0 },
      revenue: r?.revenue ?? 0n,
      sold: r?.purchases ?? 0,
      buyers: r?.buyers.size ?? 0,
      averageEntryPrice: c ? floorDiv(BigInt(c.paid_price_sum), c.paid_entries) : '0',
      spent: b?.spent ?? 0n,
      bought: b?.purchases ?? 0,
      sellers: sellersOf.get(address)?.size ?? 0,
      feedsBoughtFrom: b?.feeds.size ?? 0,
      activity: { first_activity: a?.first_activity ?? 0, last_activity: a?.last_activity ?? 0, active_days: a?.active_days ?? 0 },
    })
  }

  return { generatedAt: now, figures, leaderboards: buildLeaderboards(feeds, wallets, walletByAddress, store, feedTallies, providerTallies, buyerTallies) }
}

/** Ranks from a snapshot's figures (the slow-moving part, refreshed on its own period). */
export function buildRanks(snapshot: Snapshot): Ranks {
  const all = [...snapshot.figures.values()]
  const id = (f: WalletFigures) => f.wallet.id
  const revenue = competitionRanks(all, (f) => f.revenue, id)
  const content = competitionRanks(all, (f) => BigInt(f.content.total_entries), id)
  const buyer = competitionRanks(all, (f) => BigInt(f.bought), id)
  return new Map(all.map((f) => [f.wallet.id, { revenue_rank: revenue.get(f.wallet.id)!, content_rank: content.get(f.wallet.id)!, buyer_rank: buyer.get(f.wallet.id)! }]))
}

/** The stats of one wallet; a wallet newer than the snapshot gets zeros and the last rank. */
export function walletStats(snapshot: Snapshot, ranks: Ranks, wallet: MarketWallet): WalletStats {
  const f = snapshot.figures.get(wallet.id)
  const last = snapshot.figures.size + 1
  const rank = ranks.get(wallet.id) ?? { revenue_rank: last, content_rank: last, buyer_rank: last }
  const content = f?.content ?? { total_feeds: 0, total_entries: 0, free_entries: 0, paid_entries: 0, total_content_size: 0 }
  const revenue = f?.revenue ?? 0n
  const spent = f?.spent ?? 0n
  const bought = f?.bought ?? 0
  return {
    wallet_id: wallet.id,
    address: wallet.address,
    network: wallet.network,
    generated_at: snapshot.generatedAt,
    content_stats: content,
    revenue_stats: {
      total_revenue: revenue.toString(), revenue_usdc: usdcDecimal(revenue), unique_buyers: f?.buyers ?? 0,
      total_purchases_received: f?.sold ?? 0, average_entry_price: f?.averageEntryPrice ?? '0',
    },
    purchase_stats: {
      total_spent: spent.toString(), spent_usdc: usdcDecimal(spent), unique_sellers: f?.sellers ?? 0,
      total_purchases_made: bought, average_purchase_amount: floorDiv(spent, bought),
    },
    rankings: rank,
    activity: f?.activity ?? { first_activity: 0, last_activity: 0, active_days: 0 },
    total_feeds_created: content.total_feeds,
    total_entries_published: content.total_entries,
    total_revenue_earned: revenue.toString(),
    total_items_sold: f?.sold ?? 0,
    unique_buyers_count: f?.buyers ?? 0,
    total_purchases_made: bought,
    total_amount_spent: spent.toString(),
    unique_feeds_purchased_from: f?.feedsBoughtFrom ?? 0,
    revenue_rank: rank.revenue_rank,
    purchases_rank: rank.buyer_rank,
    last_calculated_at: snapshot.generatedAt,
    created_at: wallet.created_at,
    updated_at: wallet.updated_at,
  }
}
