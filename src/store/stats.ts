// What statistics and leaderboards are computed from: the tallies the triggers of migration 005 keep, and a few
// indexed reads. No query here reads the whole ledger.
import type { Db } from './db.ts'
import { entryRecord, type EntryRow } from './entries.ts'
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

export interface MarketWallet { id: string; address: string; address_lc: string; network: string; username: string | null; created_at: number; updated_at: number }
export interface MarketCategory { id: string; name: string; description: string | null; icon_url: string | null; is_active: number }
/** Sales of one feed (or one buyer) in a period; money as text. */
export interface Sales { key: string; purchases: number; amount: string }
export interface CategoryFigures { category_id: string; feeds: number; providers: number; entries: number; purchases: number; revenue: string; buyers: number }
export interface WalletRanks { id: string; revenue_rank: number; content_rank: number; buyer_rank: number }
export interface ContentFigures { feeds: number; entries: number; free_entries: number; paid_entries: number; content_size: number; paid_price_sum: string }
export interface AddressTotals {
  sold: number; revenue: string; buyers: number; bought: number; spent: string; sellers: number; feeds_bought_from: number
  first_at: number | null; last_at: number | null; active_days: number
}

interface Placement { feed_name: string; feed_owner_id: string; owner_wallet: string; category_name: string | null }
export type RecentEntry = EntryRecord & Placement

const DAY = 86_400

/**
 * Whole UTC days from feed_days / buyer_days, and the ledger (by its time index) for the part of the first day
 * that falls inside the period: exact for a rolling period at any second.
 */
function inPeriod(since: number): { firstWholeDay: number; edgeEnd: number } {
  const firstWholeDay = Math.ceil(since / DAY)
  return { firstWholeDay, edgeEnd: firstWholeDay * DAY }
}

export function statsStore(db: Db) {
  const feedSales = db.query<Sales, [number, number, number]>(`SELECT key, SUM(purchases) AS purchases, CAST(SUM(amount) AS TEXT) AS amount FROM (
      SELECT feed_id AS key, purchases, revenue AS amount FROM feed_days WHERE day >= ?1
      UNION ALL SELECT e.feed_id, 1, t.amount FROM transactions t JOIN entries e ON e.id = t.entry_id WHERE t.created_at >= ?2 AND t.created_at < ?3
    ) GROUP BY key`)
  const feedSalesAll = db.query<Sales, []>(`SELECT id AS key, total_purchases AS purchases, CAST(total_revenue AS TEXT) AS amount FROM feeds WHERE total_purchases > 0`)
  const buyerSales = db.query<Sales, [number, number, number]>(`SELECT key, SUM(purchases) AS purchases, CAST(SUM(amount) AS TEXT) AS amount FROM (
      SELECT payer_lc AS key, purchases, spent AS amount FROM buyer_days WHERE day >= ?1
      UNION ALL SELECT payer_lc, 1, amount FROM transactions WHERE created_at >= ?2 AND created_at < ?3
    ) GROUP BY key`)
  const buyerSalesAll = db.query<Sales, []>(`SELECT address_lc AS key, bought AS purchases, CAST(spent AS TEXT) AS amount FROM address_totals WHERE bought > 0`)
  const feedBuyers = db.query<{ n: number }, [string, number]>('SELECT COUNT(*) AS n FROM feed_buyers WHERE feed_id = ? AND last_at >= ?')
  const ownerBuyers = db.query<{ n: number }, [string, number]>(`SELECT COUNT(DISTINCT b.payer_lc) AS n FROM feeds f JOIN feed_buyers b ON b.feed_id = f.id
    WHERE f.owner_id = ? AND f.is_active = 1 AND b.last_at >= ?`)
  const buyerFeeds = db.query<{ n: number }, [string, number]>('SELECT COUNT(*) AS n FROM feed_buyers WHERE payer_lc = ? AND last_at >= ?')
  const buyerEntries = db.query<{ n: number }, [string, number]>('SELECT COUNT(*) AS n FROM entry_buyers WHERE payer_lc = ? AND last_at >= ?')
  const content = db.query<ContentFigures, [number, string]>(`SELECT
      COUNT(DISTINCT f.id) AS feeds,
      COUNT(e.id) AS entries,
      COALESCE(SUM(CASE WHEN e.is_free = 1 OR (e.expires_at IS NOT NULL AND e.expires_at <= ?1) THEN 1 ELSE 0 END), 0) AS free_entries,
      COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ?1) THEN 1 ELSE 0 END), 0) AS paid_entries,
      COALESCE(SUM(e.size), 0) AS content_size,
      CAST(COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ?1) THEN e.price ELSE 0 END), 0) AS TEXT) AS paid_price_sum
    FROM feeds f LEFT JOIN entries e ON e.feed_id = f.id AND e.is_active = 1
    WHERE f.owner_id = ?2 AND f.is_active = 1`)
  const totals = db.query<AddressTotals, [string]>(`SELECT sold, CAST(revenue AS TEXT) AS revenue, buyers, bought, CAST(spent AS TEXT) AS spent, sellers,
    feeds_bought_from, first_at, last_at, active_days FROM address_totals WHERE address_lc = ?`)
  const recent = (withCursor: boolean) => db.query<EntryRow & Placement, (string | number)[]>(`SELECT e.id, e.feed_id, e.cid, e.size,
      e.mime_type, e.title, e.description, e.metadata, e.tags, e.is_free, CAST(e.price AS TEXT) AS price, e.expires_at, e.is_active,
      e.total_purchases, CAST(e.total_revenue AS TEXT) AS total_revenue, e.created_at, e.updated_at,
      f.name AS feed_name, f.owner_id AS feed_owner_id, w.address AS owner_wallet, c.name AS category_name
    FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id
    WHERE e.is_active = 1 AND f.is_active = 1 ${withCursor ? 'AND e.id < ?' : ''} ORDER BY e.id DESC LIMIT ?`)
  const recentFirst = recent(false)
  const recentAfter = recent(true)

  return {
    /** Active entries of active feeds, newest first (a live, indexed query: no snapshot lag). */
    recentEntries: (beforeId: string | undefined, limit: number): RecentEntry[] =>
      (beforeId ? recentAfter.all(beforeId, limit) : recentFirst.all(limit)).map((row) => ({ ...entryRecord(row), feed_name: row.feed_name, feed_owner_id: row.feed_owner_id, owner_wallet: row.owner_wallet, category_name: row.category_name })),
    feeds: () => db.query<MarketFeed, []>(`SELECT f.id, f.owner_id, w.address AS owner_wallet, w.username AS owner_username, f.category_id,
        c.name AS category_name, f.name, f.description, f.image_cid, f.is_active, f.tags, f.total_entries, f.total_purchases,
        CAST(f.total_revenue AS TEXT) AS total_revenue, f.created_at, f.updated_at
      FROM feeds f JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id`).all(),
    wallets: () => db.query<MarketWallet, []>('SELECT id, address, address_lc, network, username, created_at, updated_at FROM wallets').all(),
    categories: () => db.query<MarketCategory, []>('SELECT id, name, description, icon_url, is_active FROM categories').all(),
    /** Purchases and revenue per feed (any feed) since `since`; all time when null. */
    feedSales: (since: number | null) => {
      if (since === null) return feedSalesAll.all()
      const p = inPeriod(since)
      return feedSales.all(p.firstWholeDay, since, p.edgeEnd)
    },
    /** Purchases and amount spent per payer address since `since`; all time when null. */
    buyerSales: (since: number | null) => {
      if (since === null) return buyerSalesAll.all()
      const p = inPeriod(since)
      return buyerSales.all(p.firstWholeDay, since, p.edgeEnd)
    },
    /** Distinct payers of a feed with a purchase at or after `since`. */
    feedBuyers: (feedId: string, since: number) => feedBuyers.get(feedId, since)!.n,
    /** Distinct payers across an owner's active feeds at or after `since`. */
    ownerBuyers: (ownerId: string, since: number) => ownerBuyers.get(ownerId, since)!.n,
    /** Distinct feeds and entries a payer bought from at or after `since`. */
    buyerReach: (payer: string, since: number) => ({ feeds: buyerFeeds.get(payer, since)!.n, entries: buyerEntries.get(payer, since)!.n }),
    /** Active categories' figures over their active feeds, all time. */
    categoryFigures: () => db.query<CategoryFigures, []>(`SELECT f.category_id, COUNT(*) AS feeds, COUNT(DISTINCT f.owner_id) AS providers,
        SUM(f.total_entries) AS entries, SUM(f.total_purchases) AS purchases, CAST(SUM(f.total_revenue) AS TEXT) AS revenue,
        (SELECT COUNT(DISTINCT b.payer_lc) FROM feeds g JOIN feed_buyers b ON b.feed_id = g.id WHERE g.category_id = f.category_id AND g.is_active = 1) AS buyers
      FROM feeds f WHERE f.is_active = 1 AND f.category_id IS NOT NULL GROUP BY f.category_id`).all(),
    /** Competition ranks of every wallet: revenue received, active entries published, purchases made. */
    ranks: () => db.query<WalletRanks, []>(`WITH content AS (SELECT owner_id, SUM(total_entries) AS entries FROM feeds WHERE is_active = 1 GROUP BY owner_id)
      SELECT w.id,
        RANK() OVER (ORDER BY COALESCE(t.revenue, 0) DESC) AS revenue_rank,
        RANK() OVER (ORDER BY COALESCE(c.entries, 0) DESC) AS content_rank,
        RANK() OVER (ORDER BY COALESCE(t.bought, 0) DESC) AS buyer_rank
      FROM wallets w LEFT JOIN address_totals t ON t.address_lc = w.address_lc LEFT JOIN content c ON c.owner_id = w.id`).all(),
    /** What an owner publishes now: active entries of active feeds; free means free at `now` (early access over). */
    content: (ownerId: string, now: number) => content.get(now, ownerId)!,
    /** All-time figures of an address; null when it never published, bought or sold. */
    totals: (addressLc: string) => totals.get(addressLc) ?? null,
    /** One consistent read of several queries (a snapshot of the database). */
    read: <T>(fn: () => T): T => db.transaction(fn).deferred(),
  }
}
export type StatsStore = ReturnType<typeof statsStore>
