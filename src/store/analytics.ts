// What a wallet's analytics are read from (migration 026): sales per seller, day and buyer (seller_buyer_days), per
// entry and day (entry_days) and per feed and day (feed_days, 005), all kept by triggers with the ledger row; the 402
// challenges served per feed, day and entry (challenge_days, '' for the feed's pass), added in batches. Days are UTC
// day numbers (seconds / 86400); a range is [fromDay, toDay). No query here reads the ledger but the sales export.
import { join, q, sqlText, type Sql } from './query.ts'

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
/** One day of a seller's sales; `buyers`: its distinct payers that day (a row each). */
export interface SellerDay extends SalesFigures {
  day: number
  passes: number
  buyers: number
}
/** What one payer bought of a seller on one day. */
export interface SellerBuyerDay {
  day: number
  payer_lc: string
  purchases: number
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
  /** null on a row written by hand since this start (transactions.nameNetwork names the rest). */
  network: string | null
}
export interface AnalyticsStore {
  addChallenges(counts: ChallengeCount[]): Promise<void>
  /** What was paid to `payToLc` on each day of the range that had a sale. */
  sellerDays(payToLc: string, fromDay: number, toDay: number): Promise<SellerDay[]>
  /** Each payer's purchases from `payToLc` on each day of the range, by day: distinct payers over any span are counted of these. */
  sellerBuyerDays(payToLc: string, fromDay: number, toDay: number): Promise<SellerBuyerDay[]>
  /** Sales per entry of the owner's feeds (entries with sales only); key: the entry's id. */
  entrySales(ownerId: string, fromDay: number, toDay: number): Promise<KeyedSales[]>
  /** Sales per feed of the owner (entries and passes; feeds with sales only); key: the feed's id. */
  feedSales(ownerId: string, fromDay: number, toDay: number): Promise<KeyedSales[]>
  /** Challenges per feed and entry of the owner's feeds. */
  challenges(ownerId: string, fromDay: number, toDay: number): Promise<KeyedChallenges[]>
  /** Challenges per day (only days with any). */
  challengeDays(ownerId: string, fromDay: number, toDay: number): Promise<Array<{ day: number; challenges: number }>>
  /** Every feed of the owner, deleted ones included: id and name. */
  feedNames(ownerId: string): Promise<Array<{ id: string; name: string }>>
  entryTitles(ids: string[]): Promise<Array<{ id: string; title: string | null }>>
  /** Ledger rows paid to `payToLc` in [from, to) seconds, by id after `afterId`. */
  saleLines(payToLc: string, from: number, to: number, afterId: string, limit: number): Promise<SaleLine[]>
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
    sellerDays: async (payToLc, fromDay, toDay) =>
      (
        await sql.all<SellerDay>(q`SELECT day, SUM(purchases) AS sales, CAST(SUM(revenue) AS TEXT) AS revenue, SUM(passes) AS passes,
          COUNT(*) AS buyers FROM seller_buyer_days WHERE pay_to_lc = ${payToLc} AND ${inRange('day', fromDay, toDay)} GROUP BY day`)
      ).map((row) => ({ ...salesOf(row), day: num(row.day), passes: num(row.passes), buyers: num(row.buyers) })),
    // A busy seller has tens of thousands of these in a quarter: read as they are (the embedded engine reads them in
    // its key's order), their numbers made numbers only where an engine gives text.
    async sellerBuyerDays(payToLc, fromDay, toDay) {
      const rows = await sql.all<SellerBuyerDay>(q`SELECT day, payer_lc, purchases FROM seller_buyer_days
        WHERE pay_to_lc = ${payToLc} AND ${inRange('day', fromDay, toDay)} ORDER BY day`)
      if (rows.length > 0 && typeof rows[0]!.day !== 'number')
        for (const row of rows) Object.assign(row, { day: num(row.day), purchases: num(row.purchases) })
      return rows
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
    challengeDays: async (ownerId, fromDay, toDay) =>
      (
        await sql.all<{ day: number; challenges: number }>(q`SELECT c.day, SUM(c.challenges) AS challenges
        FROM feeds f JOIN challenge_days c ON c.feed_id = f.id AND ${inRange('c.day', fromDay, toDay)}
        WHERE f.owner_id = ${ownerId} GROUP BY c.day`)
      ).map((row) => ({ day: num(row.day), challenges: num(row.challenges) })),
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
        await sql.all<SaleLine>(q`SELECT id, created_at, feed_id, entry_id, kind, payer, CAST(amount AS TEXT) AS amount, transaction_hash,
          network FROM transactions WHERE pay_to_lc = ${payToLc} AND id > ${afterId} AND ${inRange('created_at', from, to)}
        ORDER BY id LIMIT ${limit}`)
      ).map((row) => ({ ...row, created_at: num(row.created_at), amount: String(row.amount) })),
  }
}
