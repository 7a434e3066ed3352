// One wallet's statistics, live from the tallies, with its ranks from the last ranking pass (built off the event
// loop into an immutable snapshot; readers always see a finished one). Wallet ranks (where the seed is silent):
// competition ranking over all wallets (1 = highest, ties share a rank).
import type { ContentFigures, WalletRanks } from '../store/stats.ts'
import type { Records } from '../store/stores.ts'
import type { WalletRecord } from '../models/records.ts'
import { floorDiv } from './tallies.ts'
import { usdcDecimal } from '../lib/money.ts'
import type { WalletStats } from '../models/wallet.ts'

/** Wallet ranks by wallet id, from the last ranking pass; `size` wallets were ranked. */
export interface Ranks {
  byWallet: Map<string, Omit<WalletRanks, 'id'>>
  size: number
}

export function ranksFrom(rows: WalletRanks[]): Ranks {
  return { byWallet: new Map(rows.map(({ id, ...r }) => [id, r])), size: rows.length }
}

/** The stats of one wallet, now. A wallet newer than the last ranking pass gets the last rank. */
export async function walletStats(records: Records, ranks: Ranks, wallet: WalletRecord, now: number): Promise<WalletStats> {
  const { content, totals } = await records.snapshot(async (view) => ({
    content: await view.stats.content(wallet.id, now),
    totals: await view.stats.totals(wallet.address.toLowerCase()),
  }))
  const last = ranks.size + 1
  const rank = ranks.byWallet.get(wallet.id) ?? { revenue_rank: last, content_rank: last, buyer_rank: last }
  const contentStats = contentFigures(content)
  const revenue = BigInt(totals?.revenue ?? 0)
  const spent = BigInt(totals?.spent ?? 0)
  const sold = totals?.sold ?? 0
  const bought = totals?.bought ?? 0
  const buyers = totals?.buyers ?? 0
  return {
    wallet_id: wallet.id,
    address: wallet.address,
    network: wallet.network,
    generated_at: now,
    content_stats: contentStats,
    revenue_stats: {
      total_revenue: revenue.toString(),
      revenue_usdc: usdcDecimal(revenue),
      unique_buyers: buyers,
      total_purchases_received: sold,
      average_entry_price: floorDiv(BigInt(content.paid_price_sum), content.paid_entries),
    },
    purchase_stats: {
      total_spent: spent.toString(),
      spent_usdc: usdcDecimal(spent),
      unique_sellers: totals?.sellers ?? 0,
      total_purchases_made: bought,
      average_purchase_amount: floorDiv(spent, bought),
    },
    rankings: { revenue_rank: rank.revenue_rank, content_rank: rank.content_rank, buyer_rank: rank.buyer_rank },
    activity: { first_activity: totals?.first_at ?? 0, last_activity: totals?.last_at ?? 0, active_days: totals?.active_days ?? 0 },
    total_feeds_created: contentStats.total_feeds,
    total_entries_published: contentStats.total_entries,
    total_revenue_earned: revenue.toString(),
    total_items_sold: sold,
    unique_buyers_count: buyers,
    total_purchases_made: bought,
    total_amount_spent: spent.toString(),
    unique_feeds_purchased_from: totals?.feeds_bought_from ?? 0,
    revenue_rank: rank.revenue_rank,
    purchases_rank: rank.buyer_rank,
    last_calculated_at: now,
    created_at: wallet.created_at,
    updated_at: wallet.updated_at,
  }
}

function contentFigures(c: ContentFigures): WalletStats['content_stats'] {
  return {
    total_feeds: c.feeds,
    total_entries: c.entries,
    free_entries: c.free_entries,
    paid_entries: c.paid_entries,
    total_content_size: c.content_size,
  }
}
