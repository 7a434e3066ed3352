// Everything the statistics and leaderboards are computed from, read in a handful of queries.
import type { Db } from './db.ts'
import type { EntryRow } from './entries.ts'

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

export interface MarketWallet { id: string; address: string; network: string; username: string | null; created_at: number; updated_at: number }
export interface MarketSale { payer_lc: string; pay_to_lc: string; amount: string; entry_id: string | null; feed_id: string | null; created_at: number }
export interface MarketCategory { id: string; name: string; description: string | null; icon_url: string | null; is_active: number }
export interface ContentRow { owner_id: string; feeds: number; entries: number; free_entries: number; paid_entries: number; content_size: number; paid_price_sum: string }
export interface ActivityRow { wallet_id: string; first_activity: number; last_activity: number; active_days: number }

export type RecentEntryRow = EntryRow & { feed_name: string; feed_owner_id: string; owner_wallet: string; category_name: string | null }

export function marketStore(db: Db) {
  return {
    /** Active entries of active feeds, newest first (a live, indexed query: no snapshot lag). */
    recentEntries: (beforeId: string | undefined, limit: number) => db.query<RecentEntryRow, (string | number)[]>(`SELECT e.id, e.feed_id, e.cid, e.size,
        e.mime_type, e.title, e.description, e.metadata, e.tags, e.is_free, CAST(e.price AS TEXT) AS price, e.expires_at, e.is_active,
        e.total_purchases, CAST(e.total_revenue AS TEXT) AS total_revenue, e.created_at, e.updated_at,
        f.name AS feed_name, f.owner_id AS feed_owner_id, w.address AS owner_wallet, c.name AS category_name
      FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id
      WHERE e.is_active = 1 AND f.is_active = 1 ${beforeId ? 'AND e.id < ?' : ''} ORDER BY e.id DESC LIMIT ?`).all(...(beforeId ? [beforeId, limit] : [limit])),
    feeds: () => db.query<MarketFeed, []>(`SELECT f.id, f.owner_id, w.address AS owner_wallet, w.username AS owner_username, f.category_id,
        c.name AS category_name, f.name, f.description, f.image_cid, f.is_active, f.tags, f.total_entries, f.total_purchases,
        CAST(f.total_revenue AS TEXT) AS total_revenue, f.created_at, f.updated_at
      FROM feeds f JOIN wallets w ON w.id = f.owner_id LEFT JOIN categories c ON c.id = f.category_id`).all(),
    wallets: () => db.query<MarketWallet, []>('SELECT id, address, network, username, created_at, updated_at FROM wallets').all(),
    categories: () => db.query<MarketCategory, []>('SELECT id, name, description, icon_url, is_active FROM categories').all(),
    /** The ledger, with the feed each sale belongs to. */
    sales: () => db.query<MarketSale, []>(`SELECT t.payer_lc, t.pay_to_lc, CAST(t.amount AS TEXT) AS amount, t.entry_id, e.feed_id, t.created_at
      FROM transactions t LEFT JOIN entries e ON e.id = t.entry_id`).all(),
    /** What each owner publishes now: active entries of active feeds; free means free at `now` (early access over). */
    content: (now: number) => db.query<ContentRow, [number, number, number]>(`SELECT f.owner_id,
        COUNT(DISTINCT f.id) AS feeds,
        COUNT(e.id) AS entries,
        COALESCE(SUM(CASE WHEN e.is_free = 1 OR (e.expires_at IS NOT NULL AND e.expires_at <= ?1) THEN 1 ELSE 0 END), 0) AS free_entries,
        COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ?2) THEN 1 ELSE 0 END), 0) AS paid_entries,
        COALESCE(SUM(e.size), 0) AS content_size,
        CAST(COALESCE(SUM(CASE WHEN e.is_free = 0 AND (e.expires_at IS NULL OR e.expires_at > ?3) THEN e.price ELSE 0 END), 0) AS TEXT) AS paid_price_sum
      FROM feeds f LEFT JOIN entries e ON e.feed_id = f.id AND e.is_active = 1
      WHERE f.is_active = 1 GROUP BY f.owner_id`).all(now, now, now),
    /** First and last event and distinct UTC days with a feed, entry or purchase (bought or sold). */
    activity: () => db.query<ActivityRow, []>(`WITH ev (wallet_id, at) AS (
        SELECT owner_id, created_at FROM feeds
        UNION ALL SELECT f.owner_id, e.created_at FROM entries e JOIN feeds f ON f.id = e.feed_id
        UNION ALL SELECT w.id, t.created_at FROM transactions t JOIN wallets w ON w.address_lc = t.payer_lc
        UNION ALL SELECT w.id, t.created_at FROM transactions t JOIN wallets w ON w.address_lc = t.pay_to_lc)
      SELECT wallet_id, MIN(at) AS first_activity, MAX(at) AS last_activity, COUNT(DISTINCT at / 86400) AS active_days
      FROM ev GROUP BY wallet_id`).all(),
  }
}
export type MarketStore = ReturnType<typeof marketStore>
