// What statistics and leaderboards are computed from: the tallies the triggers of migration 005 keep, and a few
// indexed reads. No query here reads the whole ledger.
import { q, type Query, type Sql } from './query.ts'
import { ENTRY_COLUMNS, entryRecord, type EntryRow } from './entries.ts'
import type { EntryRecord } from '../models/records.ts'

export interface MarketFeed {
  id: string
  owner_id: string
  owner_wallet: string
  owner_username: string | null
  category_id: string | null
  category_name: string | null
  name: string
  description: string | null
  image_cid: string | null
  is_active: number
  tags: string
  total_entries: number
  total_purchases: number
  total_revenue: string
  created_at: number
  updated_at: number
}

export interface MarketWallet {
  id: string
  address: string
  address_lc: string
  network: string
  username: string | null
  created_at: number
  updated_at: number
}
export interface MarketCategory {
  id: string
  name: string
  description: string | null
  icon_url: string | null
  is_active: number
}
/** Sales of one feed (or one buyer) in a period; money as text. */
export interface Sales {
  key: string
  purchases: number
  amount: string
}
export interface CategoryFigures {
  category_id: string
  feeds: number
  providers: number
  entries: number
  purchases: number
  revenue: string
  buyers: number
}
export interface WalletRanks {
  id: string
  revenue_rank: number
  content_rank: number
  buyer_rank: number
}
export interface ContentFigures {
  feeds: number
  entries: number
  free_entries: number
  paid_entries: number
  content_size: number
  paid_price_sum: string
}
export interface AddressTotals {
  sold: number
  revenue: string
  buyers: number
  bought: number
  spent: string
  sellers: number
  feeds_bought_from: number
  first_at: number | null
  last_at: number | null
  active_days: number
}

interface Placement {
  feed_name: string
  feed_owner_id: string
  owner_wallet: string
  category_name: string | null
}
export type RecentEntry = EntryRecord & Placement

const SALEABLE = (now: number) =>
  q`e.is_active = 1 AND f.is_active = 1 AND e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ${now})`

// Of one owner only when `payTo` (an address in lower case) is given: its wallet by address_lc (unique), its feeds by
// feeds_owner and their entries by entries_feed, never the whole market's entries. CROSS JOIN keeps that order on the
// embedded engine (SQLite plans joins so, where it would otherwise walk every entry newest first for the ORDER BY).
const forSaleNow = (now: number, payTo?: string) =>
  payTo === undefined
    ? q`FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN wallets w ON w.id = f.owner_id
      LEFT JOIN categories c ON c.id = f.category_id WHERE ${SALEABLE(now)}`
    : q`FROM wallets w CROSS JOIN feeds f CROSS JOIN entries e LEFT JOIN categories c ON c.id = f.category_id
      WHERE w.address_lc = ${payTo} AND f.owner_id = w.id AND e.feed_id = f.id AND ${SALEABLE(now)}`

const placedEntry = (row: EntryRow & Placement): RecentEntry => ({
  ...entryRecord(row),
  feed_name: row.feed_name,
  feed_owner_id: row.feed_owner_id,
  owner_wallet: row.owner_wallet,
  category_name: row.category_name,
})

const DAY = 86_400

/**
 * Whole UTC days from feed_days / buyer_days, and the ledger (by its time index) for the part of the first day
 * that falls inside the period: exact for a rolling period at any second.
 */
function inPeriod(since: number): { firstWholeDay: number; edgeEnd: number } {
  const firstWholeDay = Math.ceil(since / DAY)
  return { firstWholeDay, edgeEnd: firstWholeDay * DAY }
}

export interface StatsStore {
  /** Active entries of active feeds, newest first (a live, indexed query: no snapshot lag). */
  recentEntries(beforeId: string | undefined, limit: number): Promise<RecentEntry[]>
  /** Entries for sale now (paid, early access not over, in active feeds), newest first; `payTo`: of that owner (lower case). */
  forSale(now: number, limit: number, offset: number, payTo?: string): Promise<RecentEntry[]>
  /** How many entries are for sale now (of the owner `payTo` only, when given). */
  forSaleCount(now: number, payTo?: string): Promise<number>
  feeds(): Promise<MarketFeed[]>
  wallets(): Promise<MarketWallet[]>
  categories(): Promise<MarketCategory[]>
  /** Purchases and revenue per feed (any feed) since `since`; all time when null. */
  feedSales(since: number | null): Promise<Sales[]>
  /** Purchases and amount spent per payer address since `since`; all time when null. */
  buyerSales(since: number | null): Promise<Sales[]>
  /** Distinct payers of a feed with a purchase at or after `since`. */
  feedBuyers(feedId: string, since: number): Promise<number>
  /** Distinct payers across an owner's active feeds at or after `since`. */
  ownerBuyers(ownerId: string, since: number): Promise<number>
  /** Distinct feeds and entries a payer bought from at or after `since`. */
  buyerReach(payer: string, since: number): Promise<{ feeds: number; entries: number }>
  /** Active categories' figures over their active feeds, all time. */
  categoryFigures(): Promise<CategoryFigures[]>
  /** Competition ranks of every wallet: revenue received, active entries published, purchases made. */
  ranks(): Promise<WalletRanks[]>
  /** What an owner publishes now: active entries of active feeds; free means free at `now` (early access over). */
  content(ownerId: string, now: number): Promise<ContentFigures>
  /** All-time figures of an address; null when it never published, bought or sold. */
  totals(addressLc: string): Promise<AddressTotals | null>
}

/** Counts and times may arrive as text (PostgreSQL's bigint): every listed field as a number. */
function numbers<T extends object>(row: T, fields: readonly (keyof T)[]): T {
  const out = { ...row }
  for (const field of fields) if (out[field] !== null) (out as Record<keyof T, unknown>)[field] = Number(out[field])
  return out
}

const count = async (sql: Sql, query: Query) => Number((await sql.get<{ n: number }>(query))?.n ?? 0)
const salesOf = (rows: Sales[]) => rows.map((row) => ({ key: row.key, purchases: Number(row.purchases), amount: String(row.amount) }))

export function statsStore(sql: Sql): StatsStore {
  return {
    async recentEntries(beforeId, limit) {
      const rows = await sql.all<EntryRow & Placement>(q`SELECT ${ENTRY_COLUMNS},
          f.name AS feed_name, f.owner_id AS feed_owner_id, w.address AS owner_wallet, c.name AS category_name
        FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id
        WHERE e.is_active = 1 AND f.is_active = 1 ${beforeId ? q`AND e.id < ${beforeId}` : q``} ORDER BY e.id DESC LIMIT ${limit}`)
      return rows.map(placedEntry)
    },
    async forSale(now, limit, offset, payTo) {
      const rows = await sql.all<EntryRow & Placement>(q`SELECT ${ENTRY_COLUMNS},
          f.name AS feed_name, f.owner_id AS feed_owner_id, w.address AS owner_wallet, c.name AS category_name
        ${forSaleNow(now, payTo)} ORDER BY e.id DESC LIMIT ${limit} OFFSET ${offset}`)
      return rows.map(placedEntry)
    },
    forSaleCount: async (now, payTo) =>
      Number((await sql.get<{ n: number | string }>(q`SELECT COUNT(*) AS n ${forSaleNow(now, payTo)}`))?.n ?? 0),
    feeds: async () =>
      (
        await sql.all<MarketFeed>(q`SELECT f.id, f.owner_id, w.address AS owner_wallet, w.username AS owner_username, f.category_id,
        c.name AS category_name, f.name, f.description, f.image_cid, f.is_active, f.tags, f.total_entries, f.total_purchases,
        CAST(f.total_revenue AS TEXT) AS total_revenue, f.created_at, f.updated_at
      FROM feeds f JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id WHERE f.taken_down = 0`)
      ).map((row) => numbers(row, ['is_active', 'total_entries', 'total_purchases', 'created_at', 'updated_at'])),
    wallets: async () =>
      (await sql.all<MarketWallet>(q`SELECT id, address, address_lc, network, username, created_at, updated_at FROM wallets`)).map((row) =>
        numbers(row, ['created_at', 'updated_at']),
      ),
    categories: async () =>
      (await sql.all<MarketCategory>(q`SELECT id, name, description, icon_url, is_active FROM categories`)).map((row) =>
        numbers(row, ['is_active']),
      ),
    async feedSales(since) {
      if (since === null)
        return salesOf(
          await sql.all<Sales>(
            q`SELECT id AS key, total_purchases AS purchases, CAST(total_revenue AS TEXT) AS amount FROM feeds WHERE total_purchases > 0`,
          ),
        )
      const p = inPeriod(since)
      return salesOf(
        await sql.all<Sales>(q`SELECT key, SUM(purchases) AS purchases, CAST(SUM(amount) AS TEXT) AS amount FROM (
          SELECT feed_id AS key, purchases, revenue AS amount FROM feed_days WHERE day >= ${p.firstWholeDay}
          UNION ALL SELECT e.feed_id, 1, t.amount FROM transactions t JOIN entries e ON e.id = t.entry_id
            WHERE t.created_at >= ${since} AND t.created_at < ${p.edgeEnd}
        ) s GROUP BY key`),
      )
    },
    async buyerSales(since) {
      if (since === null)
        return salesOf(
          await sql.all<Sales>(
            q`SELECT address_lc AS key, bought AS purchases, CAST(spent AS TEXT) AS amount FROM address_totals WHERE bought > 0`,
          ),
        )
      const p = inPeriod(since)
      return salesOf(
        await sql.all<Sales>(q`SELECT key, SUM(purchases) AS purchases, CAST(SUM(amount) AS TEXT) AS amount FROM (
          SELECT payer_lc AS key, purchases, spent AS amount FROM buyer_days WHERE day >= ${p.firstWholeDay}
          UNION ALL SELECT payer_lc, 1, amount FROM transactions WHERE created_at >= ${since} AND created_at < ${p.edgeEnd}
        ) s GROUP BY key`),
      )
    },
    feedBuyers: (feedId, since) => count(sql, q`SELECT COUNT(*) AS n FROM feed_buyers WHERE feed_id = ${feedId} AND last_at >= ${since}`),
    ownerBuyers: (ownerId, since) =>
      count(
        sql,
        q`SELECT COUNT(DISTINCT b.payer_lc) AS n FROM feeds f JOIN feed_buyers b ON b.feed_id = f.id
      WHERE f.owner_id = ${ownerId} AND f.is_active = 1 AND b.last_at >= ${since}`,
      ),
    buyerReach: async (payer, since) => ({
      feeds: await count(sql, q`SELECT COUNT(*) AS n FROM feed_buyers WHERE payer_lc = ${payer} AND last_at >= ${since}`),
      entries: await count(sql, q`SELECT COUNT(*) AS n FROM entry_buyers WHERE payer_lc = ${payer} AND last_at >= ${since}`),
    }),
    categoryFigures: async () =>
      (
        await sql.all<CategoryFigures>(q`SELECT f.category_id, COUNT(*) AS feeds, COUNT(DISTINCT f.owner_id) AS providers,
        SUM(f.total_entries) AS entries, SUM(f.total_purchases) AS purchases, CAST(SUM(f.total_revenue) AS TEXT) AS revenue,
        (SELECT COUNT(DISTINCT b.payer_lc) FROM feeds g JOIN feed_buyers b ON b.feed_id = g.id
          WHERE g.category_id = f.category_id AND g.is_active = 1) AS buyers
      FROM feeds f WHERE f.is_active = 1 AND f.category_id IS NOT NULL GROUP BY f.category_id`)
      ).map((row) => numbers(row, ['feeds', 'providers', 'entries', 'purchases', 'buyers'])),
    ranks: async () =>
      (
        await sql.all<WalletRanks>(q`WITH content AS (
        SELECT owner_id, SUM(total_entries) AS entries FROM feeds WHERE is_active = 1 GROUP BY owner_id)
      SELECT w.id,
        RANK() OVER (ORDER BY COALESCE(t.revenue, 0) DESC) AS revenue_rank,
        RANK() OVER (ORDER BY COALESCE(c.entries, 0) DESC) AS content_rank,
        RANK() OVER (ORDER BY COALESCE(t.bought, 0) DESC) AS buyer_rank
      FROM wallets w LEFT JOIN address_totals t ON t.address_lc = w.address_lc LEFT JOIN content c ON c.owner_id = w.id`)
      ).map((row) => numbers(row, ['revenue_rank', 'content_rank', 'buyer_rank'])),
    content: async (ownerId, now) =>
      numbers(
        (await sql.get<ContentFigures>(q`SELECT
        COUNT(DISTINCT f.id) AS feeds,
        COUNT(e.id) AS entries,
        COALESCE(SUM(CASE WHEN e.is_free = 1 OR (e.expires_at IS NOT NULL AND e.expires_at <= ${now}) THEN 1 ELSE 0 END), 0)
          AS free_entries,
        COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ${now}) THEN 1 ELSE 0 END), 0) AS paid_entries,
        COALESCE(SUM(e.size), 0) AS content_size,
        CAST(COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ${now}) THEN e.price ELSE 0 END), 0) AS TEXT)
          AS paid_price_sum
      FROM feeds f LEFT JOIN entries e ON e.feed_id = f.id AND e.is_active = 1
      WHERE f.owner_id = ${ownerId} AND f.is_active = 1`))!,
        ['feeds', 'entries', 'free_entries', 'paid_entries', 'content_size'],
      ),
    async totals(addressLc) {
      const row =
        await sql.get<AddressTotals>(q`SELECT sold, CAST(revenue AS TEXT) AS revenue, buyers, bought, CAST(spent AS TEXT) AS spent, sellers,
        feeds_bought_from, first_at, last_at, active_days FROM address_totals WHERE address_lc = ${addressLc}`)
      return row ? numbers(row, ['sold', 'buyers', 'bought', 'sellers', 'feeds_bought_from', 'first_at', 'last_at', 'active_days']) : null
    },
  }
}
