import type { Db } from './db.ts'
import type { EntryRecord } from '../models/records.ts'

/** An entries row as SQLite returns it. */
export interface EntryRow extends Omit<EntryRecord, 'is_free' | 'is_active' | 'tags' | 'price' | 'total_revenue'> {
  tags: string // JSON array
  is_free: number
  is_active: number
  price: string
  total_revenue: string
}

export const entryRecord = (row: EntryRow): EntryRecord => ({
  ...row,
  tags: JSON.parse(row.tags) as string[],
  is_free: row.is_free === 1,
  is_active: row.is_active === 1,
  price: BigInt(row.price),
  total_revenue: BigInt(row.total_revenue),
})

/** `content_key`: the key the content is sealed under (paid entries). It is kept out of EntryRecord, so no answer can carry it. */
export type NewEntry = Omit<EntryRecord, 'is_active' | 'total_purchases' | 'total_revenue' | 'created_at' | 'updated_at'> & { content_key?: Uint8Array | null; now: number }

const SELECT = `SELECT id, feed_id, cid, size, mime_type, title, description, metadata, tags, is_free,
  CAST(price AS TEXT) AS price, expires_at, is_active, total_purchases, CAST(total_revenue AS TEXT) AS total_revenue,
  created_at, updated_at FROM entries`

export function entryStore(db: Db) {
  const byId = db.query<EntryRow, [string]>(`${SELECT} WHERE id = ?`)
  const activeCount = db.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM entries WHERE feed_id = ? AND is_active = 1')
  const insert = db.query(
    `INSERT INTO entries (id, feed_id, cid, size, mime_type, title, description, metadata, tags, is_free, price, expires_at, content_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const contentKey = db.query<{ content_key: Uint8Array | null }, [string]>('SELECT content_key FROM entries WHERE id = ?')
  const deactivate = db.query('UPDATE entries SET is_active = 0, updated_at = ? WHERE id = ? AND is_active = 1')
  const deactivateFeed = db.query('UPDATE entries SET is_active = 0, deactivated_with_feed = 1, updated_at = ? WHERE feed_id = ? AND is_active = 1')
  const reactivateFeed = db.query('UPDATE entries SET is_active = 1, deactivated_with_feed = 0, updated_at = ? WHERE feed_id = ? AND deactivated_with_feed = 1')
  // A feed's total_entries is kept equal to its active entries in the same transaction as every change: by one
  // for a single entry, by a recount when a whole feed is (de)activated. The ledger audit checks it.
  const recount = db.query('UPDATE feeds SET total_entries = (SELECT COUNT(*) FROM entries WHERE feed_id = ?1 AND is_active = 1) WHERE id = ?1')
  const addActive = db.query('UPDATE feeds SET total_entries = total_entries + ? WHERE id = ?')
  const freeExpired = db.query('UPDATE entries SET is_free = 1, updated_at = ?1 WHERE is_free = 0 AND expires_at IS NOT NULL AND expires_at <= ?1')
  return {
    byId: (id: string): EntryRecord | undefined => { const row = byId.get(id); return row ? entryRecord(row) : undefined },
    /** The key the entry's content is sealed under; null when it is stored in the clear. */
    contentKey: (id: string): Uint8Array | null => contentKey.get(id)?.content_key ?? null,
    /** Early access over: paid entries whose expires_at has passed become free. */
    freeExpired: (now: number) => freeExpired.run(now).changes,
    activeCountIn: (feedId: string) => activeCount.get(feedId)!.n,
    insert(e: NewEntry) {
      insert.run(e.id, e.feed_id, e.cid, e.size, e.mime_type, e.title, e.description, e.metadata, JSON.stringify(e.tags), e.is_free ? 1 : 0, e.price, e.expires_at, e.content_key ?? null, e.now, e.now)
      addActive.run(1, e.feed_id)
    },
    deactivate(id: string, feedId: string, now: number): boolean {
      const changed = deactivate.run(now, id).changes === 1
      if (changed) addActive.run(-1, feedId)
      return changed
    },
    deactivateAllIn(feedId: string, now: number) {
      deactivateFeed.run(now, feedId)
      recount.run(feedId)
    },
    reactivateAllIn(feedId: string, now: number) {
      reactivateFeed.run(now, feedId)
      recount.run(feedId)
    },
    list(filter: { feedId: string; isFree?: boolean; beforeId?: string; limit: number }): EntryRecord[] {
      const where = ['feed_id = ?', 'is_active = 1']
      const args: (string | number)[] = [filter.feedId]
      if (filter.isFree !== undefined) where.push('is_free = ?'), args.push(filter.isFree ? 1 : 0)
      if (filter.beforeId) where.push('id < ?'), args.push(filter.beforeId)
      return db.query<EntryRow, (string | number)[]>(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...args, filter.limit).map(entryRecord)
    },
  }
}
export type EntryStore = ReturnType<typeof entryStore>
