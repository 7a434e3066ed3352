import { join, q, type Query, type Sql } from './query.ts'
import type { EntryRecord } from '../models/records.ts'
import { textListJson } from '../lib/text.ts'

/** `content_key`: the key the content is sealed under (paid entries). It is kept out of EntryRecord, so no answer can carry it. */
export type NewEntry = Omit<EntryRecord, 'is_active' | 'total_purchases' | 'total_revenue' | 'created_at' | 'updated_at'> & { content_key?: Uint8Array | null; now: number }

export interface EntryStore {
  byId(id: string): Promise<EntryRecord | undefined>
  /** The key the entry's content is sealed under; null when it is stored in the clear. */
  contentKey(id: string): Promise<Uint8Array | null>
  /** Early access over: paid entries whose expires_at has passed become free. How many did. */
  freeExpired(now: number): Promise<number>
  /** The row only: the feed's slot is taken first (FeedStore.takeEntrySlot). */
  insert(entry: NewEntry): Promise<void>
  /** False when it was not active; the feed's count goes down with it. */
  deactivate(id: string, feedId: string, now: number): Promise<boolean>
  deactivateAllIn(feedId: string, now: number): Promise<void>
  reactivateAllIn(feedId: string, now: number): Promise<void>
  list(filter: { feedId: string; isFree?: boolean; beforeId?: string; limit: number }): Promise<EntryRecord[]>
}

/** An entries row as the database returns it. */
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
  size: Number(row.size),
  is_free: Number(row.is_free) === 1,
  is_active: Number(row.is_active) === 1,
  price: BigInt(row.price),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  total_purchases: Number(row.total_purchases),
  total_revenue: BigInt(row.total_revenue),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

export const ENTRY_COLUMNS = q`e.id, e.feed_id, e.cid, e.size, e.mime_type, e.title, e.description, e.metadata, e.tags, e.is_free,
  CAST(e.price AS TEXT) AS price, e.expires_at, e.is_active, e.total_purchases, CAST(e.total_revenue AS TEXT) AS total_revenue,
  e.created_at, e.updated_at`
const SELECT = q`SELECT ${ENTRY_COLUMNS} FROM entries e`

// A feed's total_entries is kept equal to its active entries in the same transaction as every change: by one for a
// single entry, by a recount when a whole feed is (de)activated. The ledger audit checks it.
const recount = (feedId: string) => q`UPDATE feeds SET total_entries = (SELECT COUNT(*) FROM entries WHERE feed_id = ${feedId} AND is_active = 1) WHERE id = ${feedId}`

export function entryStore(sql: Sql): EntryStore {
  return {
    async byId(id) {
      const row = await sql.get<EntryRow>(q`${SELECT} WHERE e.id = ${id}`)
      return row ? entryRecord(row) : undefined
    },
    contentKey: async (id) => (await sql.get<{ content_key: Uint8Array | null }>(q`SELECT content_key FROM entries WHERE id = ${id}`))?.content_key ?? null,
    freeExpired: (now) => sql.run(q`UPDATE entries SET is_free = 1, updated_at = ${now} WHERE is_free = 0 AND expires_at IS NOT NULL AND expires_at <= ${now}`),
    async insert(e) {
      await sql.run(q`INSERT INTO entries (id, feed_id, cid, size, mime_type, title, description, metadata, tags, is_free, price, expires_at, content_key, created_at, updated_at)
        VALUES (${e.id}, ${e.feed_id}, ${e.cid}, ${e.size}, ${e.mime_type}, ${e.title}, ${e.description}, ${e.metadata}, ${textListJson(e.tags)}, ${e.is_free ? 1 : 0},
          ${e.price}, ${e.expires_at}, ${e.content_key ?? null}, ${e.now}, ${e.now})`)
    },
    async deactivate(id, feedId, now) {
      const changed = (await sql.run(q`UPDATE entries SET is_active = 0, updated_at = ${now} WHERE id = ${id} AND is_active = 1`)) === 1
      if (changed) await sql.run(q`UPDATE feeds SET total_entries = total_entries - 1 WHERE id = ${feedId}`)
      return changed
    },
    async deactivateAllIn(feedId, now) {
      const deactivate = q`UPDATE entries SET is_active = 0, deactivated_with_feed = 1, updated_at = ${now} WHERE feed_id = ${feedId} AND is_active = 1`
      await sql.run(deactivate)
      await sql.run(recount(feedId))
      // On PostgreSQL an entry created meanwhile (its slot taken, the feed row held until it committed) is not in the
      // first statement's snapshot, and the recount waited for it with that snapshot too: once the feed row is held
      // here no create can take a slot, and a second pass, seeing every commit, leaves none active. (The entries go
      // before the feed, as in a purchase, so the two never wait for each other in a cycle.) On SQLite it finds none.
      if ((await sql.run(deactivate)) > 0) await sql.run(recount(feedId))
    },
    async reactivateAllIn(feedId, now) {
      await sql.run(q`UPDATE entries SET is_active = 1, deactivated_with_feed = 0, updated_at = ${now} WHERE feed_id = ${feedId} AND deactivated_with_feed = 1`)
      await sql.run(recount(feedId))
    },
    async list(filter) {
      const where: Query[] = [q`e.feed_id = ${filter.feedId}`, q`e.is_active = 1`]
      if (filter.isFree !== undefined) where.push(q`e.is_free = ${filter.isFree ? 1 : 0}`)
      if (filter.beforeId) where.push(q`e.id < ${filter.beforeId}`)
      const rows = await sql.all<EntryRow>(q`${SELECT} WHERE ${join(where, ' AND ')} ORDER BY e.id DESC LIMIT ${filter.limit}`)
      return rows.map(entryRecord)
    },
  }
}
