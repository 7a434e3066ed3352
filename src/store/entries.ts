import { join, q, type Query, type Sql } from './query.ts'
import type { EntryRecord } from '../models/records.ts'
import { textListJson } from '../lib/text.ts'
import { patchRow } from './patch.ts'
import { entryDoc, upsertDoc } from './search.ts'

/** `content_key`: the key the content is sealed under (paid entries). It is kept out of EntryRecord, so no answer can carry it. */
export type NewEntry = Omit<EntryRecord, 'is_active' | 'taken_down' | 'total_purchases' | 'total_revenue' | 'created_at' | 'updated_at'> & {
  content_key?: Uint8Array | null
  /** A free entry's text, for search (store/search.ts); ignored for a paid one. */
  body_text?: string | null
  now: number
}

export interface EntryStore {
  byId(id: string): Promise<EntryRecord | undefined>
  /** byId, its row held until the transaction ends: no other writer changes it meanwhile. */
  held(id: string): Promise<EntryRecord | undefined>
  /** The key the entry's content is sealed under; null when it is stored in the clear. */
  contentKey(id: string): Promise<Uint8Array | null>
  /** Early access over: paid entries whose expires_at has passed become free. How many did. */
  freeExpired(now: number): Promise<number>
  /** The paid entries freeExpired(now) would make free: their content's text becomes searchable then. */
  expiring(now: number): Promise<Pick<EntryRecord, 'id' | 'cid' | 'mime_type'>[]>
  /**
   * A new active entry, taking one of its feed's `max` slots in the statement that checks them, so concurrent adds
   * cannot overshoot the limit nor land in a feed deactivated meanwhile: the entry as stored, or why there was no
   * slot. One statement where the engine can (PostgreSQL, for Records.single), else several in the caller's transaction.
   */
  add(entry: NewEntry, max: number): Promise<EntryRecord | SlotRefusal>
  /** False when it was not active; the feed's count goes down with it. */
  deactivate(id: string, feedId: string, now: number): Promise<boolean>
  deactivateAllIn(feedId: string, now: number): Promise<void>
  reactivateAllIn(feedId: string, now: number): Promise<void>
  list(filter: { feedId: string; isFree?: boolean; beforeId?: string; limit: number }): Promise<EntryRecord[]>
  /** Changes the words and the price of an entry (never its content); inside a transaction. */
  update(id: string, patch: EntryPatch, now: number): Promise<void>
  /** Whether it is inactive only because its feed was deleted (reactivating the feed brings it back). */
  withdrawnWithFeed(id: string): Promise<boolean>
  /** The operator's marks (domain/moderation.ts); the feed's count of active entries follows. */
  moderate(id: string, feedId: string, state: EntryStanding, now: number): Promise<void>
}

export interface EntryStanding {
  is_active: boolean
  taken_down: boolean
  deactivated_with_feed: boolean
}

export type EntryPatch = Partial<Pick<EntryRecord, 'title' | 'description' | 'metadata' | 'tags' | 'is_free' | 'price' | 'expires_at'>>

/** Why a feed had no slot for one more entry. */
export type SlotRefusal = 'full' | 'inactive' | 'missing'

/** An entries row as the database returns it. */
export interface EntryRow extends Omit<EntryRecord, 'is_free' | 'is_active' | 'taken_down' | 'tags' | 'price' | 'total_revenue'> {
  tags: string // JSON array
  is_free: number
  is_active: number
  taken_down: number
  price: string
  total_revenue: string
}

export const entryRecord = (row: EntryRow): EntryRecord => ({
  ...row,
  tags: JSON.parse(row.tags) as string[],
  size: Number(row.size),
  is_free: Number(row.is_free) === 1,
  is_active: Number(row.is_active) === 1,
  taken_down: Number(row.taken_down) === 1,
  price: BigInt(row.price),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  total_purchases: Number(row.total_purchases),
  total_revenue: BigInt(row.total_revenue),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

export const ENTRY_COLUMNS = q`e.id, e.feed_id, e.cid, e.size, e.mime_type, e.title, e.description, e.metadata, e.tags, e.is_free,
  CAST(e.price AS TEXT) AS price, e.expires_at, e.is_active, e.taken_down, e.total_purchases,
  CAST(e.total_revenue AS TEXT) AS total_revenue, e.created_at, e.updated_at`
export const ENTRY_SELECT = q`SELECT ${ENTRY_COLUMNS} FROM entries e`

// A feed's total_entries is kept equal to its active entries in the same transaction as every change: by one for a
// single entry, by a recount when a whole feed is (de)activated. The ledger audit checks it.
const recount = (feedId: string) =>
  q`UPDATE feeds SET total_entries = (SELECT COUNT(*) FROM entries WHERE feed_id = ${feedId} AND is_active = 1) WHERE id = ${feedId}`

export const takeSlot = (feedId: string, max: number) =>
  q`UPDATE feeds SET total_entries = total_entries + 1 WHERE id = ${feedId} AND is_active = 1 AND total_entries < ${max}`

export const NEW_ENTRY_COLUMNS = q`(id, feed_id, cid, size, mime_type, title, description, metadata, tags, is_free, price, expires_at,
  content_key, created_at, updated_at)`
export const newEntryValues = (
  e: NewEntry,
) => q`${e.id}, ${e.feed_id}, ${e.cid}, ${e.size}, ${e.mime_type}, ${e.title}, ${e.description}, ${e.metadata},
  ${textListJson(e.tags)}, ${e.is_free ? 1 : 0}, ${e.price}, ${e.expires_at}, ${e.content_key ?? null}, ${e.now}, ${e.now}`

/** Why the feed had no slot, as it stands now. */
export async function noSlot(sql: Sql, feedId: string): Promise<SlotRefusal> {
  const feed = await sql.get<{ is_active: number }>(q`SELECT is_active FROM feeds WHERE id = ${feedId}`)
  return !feed ? 'missing' : Number(feed.is_active) !== 1 ? 'inactive' : 'full'
}

export function entryStore(sql: Sql): EntryStore {
  async function byId(id: string) {
    const row = await sql.get<EntryRow>(q`${ENTRY_SELECT} WHERE e.id = ${id}`)
    return row ? entryRecord(row) : undefined
  }

  return {
    byId,
    // One writer at a time (the embedded engine): reading in the transaction holds the row, and the slot is taken
    // and the entry inserted as three statements of it. An engine with concurrent writers overrides both
    // (store/postgres/stores.ts).
    held: byId,
    contentKey: async (id) =>
      (await sql.get<{ content_key: Uint8Array | null }>(q`SELECT content_key FROM entries WHERE id = ${id}`))?.content_key ?? null,
    freeExpired: (now) =>
      sql.run(q`UPDATE entries SET is_free = 1, updated_at = ${now} WHERE is_free = 0 AND expires_at IS NOT NULL AND expires_at <= ${now}`),
    expiring: (now) =>
      sql.all(q`SELECT id, cid, mime_type FROM entries WHERE is_free = 0 AND expires_at IS NOT NULL AND expires_at <= ${now}`),
    async add(e, max) {
      if ((await sql.run(takeSlot(e.feed_id, max))) !== 1) return noSlot(sql, e.feed_id)
      await sql.run(q`INSERT INTO entries ${NEW_ENTRY_COLUMNS} VALUES (${newEntryValues(e)})`)
      await sql.run(upsertDoc(entryDoc(e)))
      return (await byId(e.id))!
    },
    async deactivate(id, feedId, now) {
      const changed = (await sql.run(q`UPDATE entries SET is_active = 0, updated_at = ${now} WHERE id = ${id} AND is_active = 1`)) === 1
      if (changed) await sql.run(q`UPDATE feeds SET total_entries = total_entries - 1 WHERE id = ${feedId}`)
      return changed
    },
    async deactivateAllIn(feedId, now) {
      const deactivate = q`UPDATE entries SET is_active = 0, deactivated_with_feed = 1, updated_at = ${now}
        WHERE feed_id = ${feedId} AND is_active = 1`
      await sql.run(deactivate)
      await sql.run(recount(feedId))
      // On PostgreSQL an entry created meanwhile (its slot taken, the feed row held until it committed) is not in the
      // first statement's snapshot, and the recount waited for it with that snapshot too: once the feed row is held
      // here no create can take a slot, and a second pass, seeing every commit, leaves none active. (The entries go
      // before the feed, as in a purchase, so the two never wait for each other in a cycle.) On SQLite it finds none.
      if ((await sql.run(deactivate)) > 0) await sql.run(recount(feedId))
    },
    async reactivateAllIn(feedId, now) {
      await sql.run(
        q`UPDATE entries SET is_active = 1, deactivated_with_feed = 0, updated_at = ${now}
          WHERE feed_id = ${feedId} AND deactivated_with_feed = 1 AND taken_down = 0`,
      )
      await sql.run(recount(feedId))
    },
    async update(id, patch, now) {
      const { tags, is_free, ...rest } = patch
      const values: Record<string, string | number | bigint | null> = { ...rest }
      if (tags !== undefined) values.tags = textListJson(tags)
      if (is_free !== undefined) values.is_free = is_free ? 1 : 0
      await patchRow(sql, 'entries', id, values, now)
      // Its search document's words follow its own (a body is the domain's to add: see SearchStore.setBody).
      if (patch.title !== undefined || patch.description !== undefined || tags !== undefined) {
        const entry = (await byId(id))!
        await sql.run(q`UPDATE search_docs SET name = ${entry.title ?? ''}, description = ${entry.description ?? ''},
          tags = ${entry.tags.join(' ')} WHERE item_id = ${id}`)
      }
    },
    withdrawnWithFeed: async (id) =>
      Number((await sql.get<{ d: number }>(q`SELECT deactivated_with_feed AS d FROM entries WHERE id = ${id}`))?.d ?? 0) === 1,
    async moderate(id, feedId, state, now) {
      await sql.run(q`UPDATE entries SET is_active = ${state.is_active ? 1 : 0}, taken_down = ${state.taken_down ? 1 : 0},
        deactivated_with_feed = ${state.deactivated_with_feed ? 1 : 0}, updated_at = ${now} WHERE id = ${id}`)
      await sql.run(recount(feedId))
    },
    async list(filter) {
      const where: Query[] = [q`e.feed_id = ${filter.feedId}`, q`e.is_active = 1`]
      if (filter.isFree !== undefined) where.push(q`e.is_free = ${filter.isFree ? 1 : 0}`)
      if (filter.beforeId) where.push(q`e.id < ${filter.beforeId}`)
      const rows = await sql.all<EntryRow>(q`${ENTRY_SELECT} WHERE ${join(where, ' AND ')} ORDER BY e.id DESC LIMIT ${filter.limit}`)
      return rows.map(entryRecord)
    },
  }
}
