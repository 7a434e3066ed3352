// A creator's analytics (issue 39): what was paid to its wallet over a range of whole UTC days (totals, a series of
// buckets, its top entries and feeds) and the 402 challenges served for its entries and passes, read from the tallies
// of migration 026 in one snapshot; and its sales as CSV, one ledger row a line, read page by page as it is sent.
// Only the wallet itself, signed, may read them.
import type { Records } from '../store/stores.ts'
import type { AnalyticsStore, KeyedChallenges, KeyedSales, SellerBuyerDay, SellerDay } from '../store/analytics.ts'
import type { WalletRecord } from '../models/records.ts'
import type { Signer } from './auth.ts'
import type { WalletService } from './wallets.ts'
import type { ChallengeCounter } from './challenges.ts'
import { ANALYTICS_CSV_COLUMNS, ANALYTICS_TOP, type Analytics, type AnalyticsEntry, type AnalyticsFeed } from '../models/analytics.ts'
import { analyticsRange, bucketIndexes, DAY, type AnalyticsRange } from './analytics-range.ts'
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

/** What a bucket of the series, or the whole range, adds up to. */
interface Bucket {
  sales: number
  revenue: bigint
  passes: number
  buyers: number
  challenges: number
}
const emptyBucket = (): Bucket => ({ sales: 0, revenue: 0n, passes: 0, buyers: 0, challenges: 0 })

/**
 * The range's totals and buckets, from its days' sums and each payer's days: distinct payers are counted here, in one
 * pass over the payers' days (they come by day, so a payer seen in another bucket than its last is new to this one).
 */
function seriesOf(
  range: AnalyticsRange,
  days: SellerDay[],
  payerDays: SellerBuyerDay[],
  challengeDays: Array<{ day: number; challenges: number }>,
) {
  const index = bucketIndexes(range)
  const buckets = range.starts.map(emptyBucket)
  const totals = { ...emptyBucket(), repeat_buyers: 0 }
  const bucketOf = (day: number) => buckets[index[day - range.fromDay]!]!
  for (const d of days) {
    const revenue = BigInt(d.revenue)
    for (const into of [bucketOf(d.day), totals]) Object.assign(into, { sales: into.sales + d.sales, revenue: into.revenue + revenue })
    totals.passes += d.passes
    if (range.interval === 'day') bucketOf(d.day).buyers = d.buyers // a row per payer and day
  }
  const bought = new Map<string, number>()
  const lastBucket = new Map<string, number>()
  for (const r of payerDays) {
    bought.set(r.payer_lc, (bought.get(r.payer_lc) ?? 0) + r.purchases)
    if (range.interval === 'day') continue
    const bucket = index[r.day - range.fromDay]!
    if (lastBucket.get(r.payer_lc) !== bucket) {
      lastBucket.set(r.payer_lc, bucket)
      buckets[bucket]!.buyers++
    }
  }
  totals.buyers = bought.size
  for (const n of bought.values()) if (n > 1) totals.repeat_buyers++
  for (const c of challengeDays) {
    bucketOf(c.day).challenges += c.challenges
    totals.challenges += c.challenges
  }
  return { totals, buckets }
}

async function figures(view: AnalyticsStore, wallet: WalletRecord, range: AnalyticsRange) {
  const { fromDay, toDay } = range
  const payTo = wallet.address.toLowerCase()
  const [days, payerDays, challengeDays, entrySales, feedSales, challenges, feedNames] = await Promise.all([
    view.sellerDays(payTo, fromDay, toDay),
    view.sellerBuyerDays(payTo, fromDay, toDay),
    view.challengeDays(wallet.id, fromDay, toDay),
    view.entrySales(wallet.id, fromDay, toDay),
    view.feedSales(wallet.id, fromDay, toDay),
    view.challenges(wallet.id, fromDay, toDay),
    view.feedNames(wallet.id),
  ])
  const entries = top(ranked(entrySales, challenges, (c) => c.entry_id || null).values())
  const titles = new Map((await view.entryTitles(entries.map((e) => e.id))).map((e) => [e.id, e.title]))
  return {
    ...seriesOf(range, days, payerDays, challengeDays),
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
      const names = new Map(f.feedNames.map((feed) => [feed.id, feed.name]))
      const money = (r: Ranked) => ({ sales: r.sales, revenue: r.revenue.toString(), challenges: r.challenges })
      const { totals } = f
      return {
        wallet_id: wallet.id,
        from: range.fromDay * DAY,
        to: range.toDay * DAY,
        interval: range.interval,
        totals: {
          revenue: totals.revenue.toString(),
          revenue_usdc: usdcDecimal(totals.revenue),
          sales: totals.sales,
          entry_sales: totals.sales - totals.passes,
          pass_sales: totals.passes,
          unique_buyers: totals.buyers,
          repeat_buyers: totals.repeat_buyers,
          challenges: totals.challenges,
        },
        series: range.starts.map((start, i) => {
          const b = f.buckets[i]!
          return { start: start * DAY, revenue: b.revenue.toString(), sales: b.sales, unique_buyers: b.buyers, challenges: b.challenges }
        }),
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
            const fields = [time, r.feed_id ?? '', r.entry_id ?? '', r.kind, r.payer, r.amount, usdcDecimal(r.amount), r.network ?? network]
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
