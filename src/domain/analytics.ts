// A creator's analytics (issue 39): what was paid to its wallet over a range of whole UTC days (totals, a series of
// buckets, its top entries and feeds) and the 402 challenges served for its entries and passes, read from the tallies
// of migration 026 in one snapshot; and its sales as CSV, one ledger row a line, read page by page as it is sent.
// Only the wallet itself, signed, may read them.
import type { Records } from '../store/stores.ts'
import type { AnalyticsStore, KeyedChallenges, KeyedSales } from '../store/analytics.ts'
import type { WalletRecord } from '../models/records.ts'
import type { Signer } from './auth.ts'
import type { WalletService } from './wallets.ts'
import type { ChallengeCounter } from './challenges.ts'
import { ANALYTICS_CSV_COLUMNS, ANALYTICS_TOP, type Analytics, type AnalyticsEntry, type AnalyticsFeed } from '../models/analytics.ts'
import { analyticsRange, DAY, type AnalyticsRange } from './analytics-range.ts'
import { usdcDecimal } from '../lib/money.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

/** Ledger rows read per page of the export. */
const CSV_PAGE = 1000

type Query = { from?: string; to?: string; interval?: string }
interface Ranked {
  id: string
  sales: number
  revenue: bigint
  challenges: number
}

/** Highest revenue first, then sales, then challenges; ties by id, so the order is the same on every engine. */
function top(items: Iterable<Ranked>): Ranked[] {
  return [...items]
    .sort((a, b) =>
      a.revenue !== b.revenue
        ? a.revenue > b.revenue
          ? -1
          : 1
        : b.sales - a.sales || b.challenges - a.challenges || (a.id < b.id ? -1 : 1),
    )
    .slice(0, ANALYTICS_TOP)
}

/** Sales and challenges by id (an entry's, or a feed's: its entries' and its pass's challenges together). */
function ranked(sales: KeyedSales[], challenges: KeyedChallenges[], idOf: (c: KeyedChallenges) => string | null): Map<string, Ranked> {
  const byId = new Map<string, Ranked>()
  const of = (id: string) => byId.get(id) ?? byId.set(id, { id, sales: 0, revenue: 0n, challenges: 0 }).get(id)!
  for (const s of sales) Object.assign(of(s.key), { sales: s.sales, revenue: BigInt(s.revenue) })
  for (const c of challenges) {
    const id = idOf(c)
    if (id !== null) of(id).challenges += c.challenges
  }
  return byId
}

async function figures(view: AnalyticsStore, wallet: WalletRecord, range: AnalyticsRange) {
  const { fromDay, toDay } = range
  const payTo = wallet.address.toLowerCase()
  const [totals, series, challengeSeries, entrySales, feedSales, challenges, feedNames] = await Promise.all([
    view.sellerTotals(payTo, fromDay, toDay),
    view.sellerSeries(payTo, fromDay, toDay, range),
    view.challengeSeries(wallet.id, fromDay, toDay, range),
    view.entrySales(wallet.id, fromDay, toDay),
    view.feedSales(wallet.id, fromDay, toDay),
    view.challenges(wallet.id, fromDay, toDay),
    view.feedNames(wallet.id),
  ])
  const entries = top(ranked(entrySales, challenges, (c) => c.entry_id || null).values())
  const titles = new Map((await view.entryTitles(entries.map((e) => e.id))).map((e) => [e.id, e.title]))
  return {
    totals,
    series,
    challengeSeries,
    entries,
    titles,
    feeds: top(ranked(feedSales, challenges, (c) => c.feed_id).values()),
    feedNames,
  }
}

export function analyticsService(d: { records: Records; wallets: WalletService; challenges: ChallengeCounter; network: string }) {
  /** The wallet `walletId`, when `signer` is it: 400 for an id that is no UUID, 404 for none, 403 for another's. */
  async function own(signer: Signer, walletId: string): Promise<WalletRecord> {
    const wallet = await d.wallets.byId(walletId)
    if (wallet.address.toLowerCase() !== signer.address.toLowerCase()) fail('UNAUTHORIZED', 'a wallet reads only its own analytics')
    return wallet
  }

  return {
    async report(signer: Signer, walletId: string, query: Query, now = nowSeconds()): Promise<Analytics> {
      const wallet = await own(signer, walletId)
      const range = analyticsRange(query, now)
      await d.challenges.flush().catch(() => {}) // what this instance served so far is counted (a failed flush keeps its counts)
      const f = await d.records.snapshot((view) => figures(view.analytics, wallet, range))
      const sales = new Map(f.series.map((s) => [s.bucket, s]))
      const challenged = new Map(f.challengeSeries.map((c) => [c.bucket, c.challenges]))
      const names = new Map(f.feedNames.map((feed) => [feed.id, feed.name]))
      const revenue = BigInt(f.totals.revenue)
      const money = (r: Ranked) => ({ sales: r.sales, revenue: r.revenue.toString(), challenges: r.challenges })
      return {
        wallet_id: wallet.id,
        from: range.fromDay * DAY,
        to: range.toDay * DAY,
        interval: range.interval,
        totals: {
          sales: f.totals.sales,
          revenue: revenue.toString(),
          revenue_usdc: usdcDecimal(revenue),
          entry_sales: f.totals.sales - f.totals.passes,
          pass_sales: f.totals.passes,
          unique_buyers: f.totals.buyers,
          repeat_buyers: f.totals.repeat_buyers,
          challenges: f.challengeSeries.reduce((n, c) => n + c.challenges, 0),
        },
        series: range.starts.map((start) => ({
          start: start * DAY,
          sales: sales.get(start)?.sales ?? 0,
          revenue: sales.get(start)?.revenue ?? '0',
          unique_buyers: sales.get(start)?.buyers ?? 0,
          challenges: challenged.get(start) ?? 0,
        })),
        top_entries: f.entries.map((e): AnalyticsEntry => ({ entry_id: e.id, title: f.titles.get(e.id) ?? null, ...money(e) })),
        top_feeds: f.feeds.map((e): AnalyticsFeed => ({ feed_id: e.id, name: names.get(e.id) ?? '', ...money(e) })),
      }
    },

    /** The export's name and its lines (the header, then one per sale, oldest first), read a page at a time as they are pulled. */
    async csv(signer: Signer, walletId: string, query: Query, now = nowSeconds()) {
      const wallet = await own(signer, walletId)
      const range = analyticsRange(query, now)
      const [from, to] = [range.fromDay * DAY, range.toDay * DAY]
      const read = d.records.read.analytics
      const network = d.network
      async function* lines(): AsyncGenerator<string> {
        yield `${ANALYTICS_CSV_COLUMNS.join(',')}\n`
        for (let after = ''; ; ) {
          const rows = await read.saleLines(wallet.address.toLowerCase(), from, to, after, CSV_PAGE)
          let text = ''
          for (const r of rows) {
            const time = new Date(r.created_at * 1000).toISOString()
            const fields = [time, r.feed_id ?? '', r.entry_id ?? '', r.kind, r.payer, r.amount, usdcDecimal(r.amount), network]
            text += `${[...fields, r.transaction_hash].map(csvField).join(',')}\n`
          }
          if (text) yield text
          if (rows.length < CSV_PAGE) return
          after = rows.at(-1)!.id
        }
      }
      return { filename: `trellis-sales-${wallet.id}-${from}-${to}.csv`, lines: lines() }
    },
  }
}
export type AnalyticsService = ReturnType<typeof analyticsService>

/** A CSV field: quoted only when it holds a comma, a quote or a line break (none of the ledger's do). */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value)
