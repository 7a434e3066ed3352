// Holds the current statistics/leaderboard snapshot and the wallet ranks; the jobs rebuild them.
import type { MarketStore } from '../store/market.ts'
import type { WalletService } from './wallets.ts'
import { buildRanks, buildSnapshot, walletStats, PERIODS, type Period, type Ranks, type Snapshot } from './market.ts'
import { fail } from './errors.ts'

export type PeriodBoard = 'most-popular' | 'top-revenue' | 'top-providers' | 'top-buyers'
export type PlainBoard = 'trending' | 'top-feeds' | 'category-stats'

export function marketService(d: { market: MarketStore; wallets: WalletService }) {
  let snapshot: Snapshot = buildSnapshot(d.market)
  let ranks: Ranks = buildRanks(snapshot)

  return {
    /** Rebuilds statistics and leaderboards; returns the time it took (ms). */
    refreshStats(): number {
      const started = performance.now()
      snapshot = buildSnapshot(d.market)
      return performance.now() - started
    },
    refreshRanks(): void {
      ranks = buildRanks(snapshot)
    },
    stats(walletId: string) {
      const wallet = d.wallets.byId(walletId)
      return walletStats(snapshot, ranks, { ...wallet })
    },
    period(raw: string | undefined): Period {
      if (raw === undefined || raw === '') return 'all'
      if (!(raw in PERIODS)) fail('INVALID_PARAMETER', 'invalid period', 'period must be one of 1d, 7d, 30d, all')
      return raw as Period
    },
    byPeriod(board: PeriodBoard, period: Period): unknown[] {
      const l = snapshot.leaderboards
      return { 'most-popular': l.mostPopular, 'top-revenue': l.topRevenue, 'top-providers': l.topProviders, 'top-buyers': l.topBuyers }[board][period]
    },
    plain(board: PlainBoard): unknown[] {
      const l = snapshot.leaderboards
      return { trending: l.trending, 'top-feeds': l.topFeeds, 'category-stats': l.categoryStats }[board]
    },
    recentEntries: (beforeId: string | undefined, limit: number) => d.market.recentEntries(beforeId, limit),
  }
}
export type MarketService = ReturnType<typeof marketService>
