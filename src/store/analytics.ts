// What a wallet's analytics are read from (migration 026): sales per seller, day and buyer (seller_buyer_days), per
// entry and day (entry_days) and per feed and day (feed_days, 005), all kept by triggers with the ledger row; the 402
// challenges served per feed, day and entry (challenge_days, '' for the feed's pass), added in batches. Days are UTC
// day numbers (seconds / 86400); a range is [fromDay, toDay). No query here reads the ledger but the sales export.
import { join, q, sqlText, type Query, type Sql } from './query.ts'
import type { AnalyticsIntervalName } from '../models/analytics.ts'

/** Challenges served on one day for one entry (or, entry_id '', for a feed's pass). */
export interface ChallengeCount {
  feed_id: string
  entry_id: string
  day: number
  challenges: number
}
/** Sales in a range: counts as numbers, money as text. */
export interface SalesFigures {
  sales: number
  revenue: string
}
export interface SellerTotals extends SalesFigures {
  buyers: number
  repeat_buyers: number
  passes: number
}
/** One bucket: its first day. */
export interface SeriesFigures extends SalesFigures {
  bucket: number
  buyers: number
}
export interface KeyedSales extends SalesFigures {
  key: string
}
export interface KeyedChallenges {
  feed_id: string
  entry_id: string
  challenges: number
}
/** A ledger row as the export lists it. */
export interface SaleLine {
  id: string
  created_at: number
  feed_id: string | null
  entry_id: string | null
  kind: string
  payer: string
  amount: string
  transaction_hash: string
}
export interface Buckets {
  interval: AnalyticsIntervalName
  /** The first day of each bucket, in order. */
  starts: number[]
}

export interface AnalyticsStore {
  addChallenges(counts: ChallengeCount[]): Promise<void>
  /** What was paid to `payToLc` in the range, over its distinct payers. */
  sellerTotals(payToLc: string, fromDay: number, toDay: number): Promise<SellerTotals>
  /** The same per bucket (only buckets with sales). */
  sellerSeries(payToLc: string, fromDay: number, toDay: number, buckets: Buckets): Promise<SeriesFigures[]>
  /** Sales per entry of the owner's feeds (entries with sales only); key: the entry's id. */
  entrySales(ownerId: string, fromDay: number, toDay: number): Promise<KeyedSales[]>
  /** Sales per feed of the owner (entries and passes; feeds with sales only); key: the feed's id. */
  feedSales(ownerId: string, fromDay: number, toDay: number): Promise<KeyedSales[]>
  /** Challenges per feed and entry of the owner's feeds. */
  challenges(ownerId: string, fromDay: number, toDay: number): Promise<KeyedChallenges[]>
  /** Challenges per bucket (only buckets with any). */
  challengeSeries(ownerId: string, fromDay: number, toDay: number, buckets: Buckets): Promise<Array<{ bucket: number; challenges: number }>>
  /** Every feed of the owner, deleted ones included: id and name. */
  feedNames(ownerId: string): Promise<Array<{ id: string; name: string }>>
  entryTitles(ids: string[]): Promise<Array<{ id: string; title: string | null }>>
  /** Ledger rows paid to `payToLc` in [from, to) seconds, by id after `afterId`. */
  saleLines(payToLc: string, from: number, to: number, afterId: string, limit: number): Promise<SaleLine[]>
}

/** The first day of the bucket `column` (a day number) falls in: the day, its week's Monday, or its month's first day. */
export function bucketOf(column: string, buckets: Buckets): Query {
  if (buckets.interval === 'day') return sqlText(column)
  if (buckets.interval === 'week') return sqlText(`(${column} - ((${column} + 3) % 7))`) // day 4 (1970-01-05) was a Monday
  // Months are not of one length: the last start at or before the day (code-made integers, never a request's text).
  const { starts } = buckets
  const whens = starts.slice(0, -1).map((start, i) => sqlText(`WHEN ${column} < ${starts[i + 1]} THEN ${start}`))
  return whens.length === 0 ? sqlText(String(starts[0])) : q`CASE ${join(whens, ' ')} ELSE ${sqlText(String(starts.at(-1)))} END`
}

const num = (value: unknown) => Number(value ?? 0)
const salesOf = <T extends SalesFigures>(row: T): T => ({ ...row, sales: num(row.sales), revenue: String(row.revenue ?? '0') })
const inRange = (column: string, fromDay: number, toDay: number) => q`${sqlText(column)} >= ${fromDay} AND ${sqlText(column)} < ${toDay}`

export function analyticsStore(sql: Sql): AnalyticsStore {
  return {
    async addChallenges(counts) {
      for (const c of counts)
        await sql.run(q`INSERT INTO challenge_days (feed_id, day, entry_id, challenges) VALUES (${c.feed_id}, ${c.day}, ${c.entry_id},
          ${c.challenges}) ON CONFLICT (feed_id, day, entry_id) DO UPDATE SET challenges = challenge_days.challenges + excluded.challenges`)
    },
    async sellerTotals(payToLc, fromDay, toDay) {
      const row =
        await sql.get<SellerTotals>(q`SELECT COUNT(*) AS buyers, COALESCE(SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END), 0) AS repeat_buyers,
          COALESCE(SUM(n), 0) AS sales, COALESCE(SUM(passes), 0) AS passes, CAST(COALESCE(SUM(revenue), 0) AS TEXT) AS revenue
        FROM (SELECT SUM(purchases) AS n, SUM(passes) AS passes, SUM(revenue) AS revenue FROM seller_buyer_days
          WHERE pay_to_lc = ${payToLc} AND ${inRange('day', fromDay, toDay)} GROUP BY payer_lc) b`)
      return { ...salesOf(row!), buyers: num(row!.buyers), repeat_buyers: num(row!.repeat_buyers), passes: num(row!.passes) }
    },
    async sellerSeries(payToLc, fromDay, toDay, buckets) {
      const rows = await sql.all<SeriesFigures>(q`SELECT ${bucketOf('day', buckets)} AS bucket, SUM(purchases) AS sales,
          CAST(SUM(revenue) AS TEXT) AS revenue, COUNT(DISTINCT payer_lc) AS buyers
        FROM seller_buyer_days WHERE pay_to_lc = ${payToLc} AND ${inRange('day', fromDay, toDay)} GROUP BY 1`)
      return rows.map((row) => ({ ...salesOf(row), bucket: num(row.bucket), buyers: num(row.buyers) }))
    },
    entrySales: async (ownerId, fromDay, toDay) =>
      (
        await sql.all<KeyedSales>(q`SELECT d.entry_id AS key, SUM(d.purchases) AS sales, CAST(SUM(d.revenue) AS TEXT) AS revenue
        FROM feeds f JOIN entries e ON e.feed_id = f.id JOIN entry_days d ON d.entry_id = e.id AND ${inRange('d.day', fromDay, toDay)}
        WHERE f.owner_id = ${ownerId} GROUP BY d.entry_id`)
      ).map(salesOf),
    feedSales: async (ownerId, fromDay, toDay) =>
      (
        await sql.all<KeyedSales>(q`SELECT d.feed_id AS key, SUM(d.purchases) AS sales, CAST(SUM(d.revenue) AS TEXT) AS revenue
        FROM feeds f JOIN feed_days d ON d.feed_id = f.id AND ${inRange('d.day', fromDay, toDay)}
        WHERE f.owner_id = ${ownerId} GROUP BY d.feed_id`)
      ).map(salesOf),
    challenges: async (ownerId, fromDay, toDay) =>
      (
        await sql.all<KeyedChallenges>(q`SELECT c.feed_id, c.entry_id, SUM(c.challenges) AS challenges
        FROM feeds f JOIN challenge_days c ON c.feed_id = f.id AND ${inRange('c.day', fromDay, toDay)}
        WHERE f.owner_id = ${ownerId} GROUP BY c.feed_id, c.entry_id`)
      ).map((row) => ({ ...row, challenges: num(row.challenges) })),
    challengeSeries: async (ownerId, fromDay, toDay, buckets) =>
      (
        await sql.all<{ bucket: number; challenges: number }>(q`SELECT ${bucketOf('c.day', buckets)} AS bucket,
          SUM(c.challenges) AS challenges
        FROM feeds f JOIN challenge_days c ON c.feed_id = f.id AND ${inRange('c.day', fromDay, toDay)}
        WHERE f.owner_id = ${ownerId} GROUP BY 1`)
      ).map((row) => ({ bucket: num(row.bucket), challenges: num(row.challenges) })),
    feedNames: (ownerId) => sql.all(q`SELECT id, name FROM feeds WHERE owner_id = ${ownerId}`),
    entryTitles: async (ids) =>
      ids.length === 0
        ? []
        : sql.all(
            q`SELECT id, title FROM entries WHERE id IN (${join(
              ids.map((id) => q`${id}`),
              ', ',
            )})`,
          ),
    saleLines: async (payToLc, from, to, afterId, limit) =>
      (
        await sql.all<SaleLine>(q`SELECT id, created_at, feed_id, entry_id, kind, payer, CAST(amount AS TEXT) AS amount, transaction_hash
        FROM transactions WHERE pay_to_lc = ${payToLc} AND id > ${afterId} AND ${inRange('created_at', from, to)}
        ORDER BY id LIMIT ${limit}`)
      ).map((row) => ({ ...row, created_at: num(row.created_at), amount: String(row.amount) })),
  }
}
