import { join, q, type Query, type Sql } from './query.ts'
import { patchRow } from './patch.ts'
import { feedDoc, upsertDoc } from './search.ts'
import { sqlLower, textListJson } from '../lib/text.ts'
import type { FeedOrder } from '../models/feed.ts'
import type { FeedRecord, PassOfferRecord } from '../models/records.ts'

export interface FeedFilter {
  ownerId?: string
  categoryId?: string
  tags?: string[]
  /** Words the name or description holds, A-Z case folded (as sqlLower). */
  search?: string
  minEntries: number
  isActive?: boolean
  createdBefore?: number // from min_age
  createdAfter?: number // from max_age
  beforeId?: string
  /** Newest first (by id, the default), or by purchases or revenue, most first, then newest. */
  order?: FeedOrder
  /** For a ranked order: the page after this feed's figure and id. */
  beforeRanked?: [figure: bigint, id: string]
  limit: number
}

const RANKED_BY = { purchases: q`f.total_purchases`, revenue: q`f.total_revenue` }

export type FeedPatch = Partial<
  Pick<FeedRecord, 'name' | 'description' | 'image_cid' | 'category_id' | 'tags' | 'is_active' | 'taken_down'>
>
export type NewFeed = {
  id: string
  owner_id: string
  category_id: string | null
  name: string
  description: string | null
  image_cid: string | null
  tags: string[]
  now: number
}

export interface FeedStore {
  byId(id: string): Promise<FeedRecord | undefined>
  /** byId, its row held until the transaction ends: no other writer changes it meanwhile. */
  held(id: string): Promise<FeedRecord | undefined>
  list(filter: FeedFilter): Promise<FeedRecord[]>
  activeCountOf(ownerId: string): Promise<number>
  insert(row: NewFeed): Promise<void>
  /** False when a UNIQUE index refuses the new values. */
  update(id: string, patch: FeedPatch, now: number): Promise<boolean>
  /**
   * Holds the owner's wallet row until the transaction ends, so two transactions counting the owner's feeds do not
   * both see room for one more (nothing to do where there is one writer at a time).
   */
  lockOwner(walletId: string): Promise<void>
}

/** A feeds row as the database returns it, with the columns of its pass on sale (all null when none is). */
export interface FeedRow extends Omit<FeedRecord, 'is_active' | 'taken_down' | 'tags' | 'total_revenue' | 'pass'> {
  is_active: number
  taken_down: number
  tags: string // JSON array
  total_revenue: string
  pass_price: string | null
  pass_duration_s: number | null
  pass_description: string | null
  pass_created_at: number | null
  pass_updated_at: number | null
}

/** The pass on sale of a feed row: none while the feed is inactive (no sales), back when it is restored. */
function passOf(row: FeedRow): PassOfferRecord | null {
  if (row.pass_price === null || Number(row.is_active) !== 1) return null
  return {
    feed_id: row.id,
    price: BigInt(row.pass_price),
    duration_s: Number(row.pass_duration_s),
    description: row.pass_description,
    is_active: true,
    created_at: Number(row.pass_created_at),
    updated_at: Number(row.pass_updated_at),
  }
}

export const feedRecord = (row: FeedRow): FeedRecord => {
  const { pass_price: _p, pass_duration_s: _d, pass_description: _t, pass_created_at: _c, pass_updated_at: _u, ...feed } = row
  return {
    ...feed,
    pass: passOf(row),
    is_active: Number(row.is_active) === 1,
    taken_down: Number(row.taken_down) === 1,
    tags: JSON.parse(row.tags) as string[],
    total_revenue: BigInt(row.total_revenue),
    total_entries: Number(row.total_entries),
    total_purchases: Number(row.total_purchases),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  }
}

export const FEED_SELECT = q`SELECT f.id, f.owner_id, w.address AS owner_wallet_address, f.category_id, f.name, f.description,
  f.image_cid, f.tags, f.is_active, f.taken_down, f.total_entries, f.total_purchases, CAST(f.total_revenue AS TEXT) AS total_revenue,
  f.created_at, f.updated_at, CAST(p.price AS TEXT) AS pass_price, p.duration_s AS pass_duration_s, p.description AS pass_description,
  p.created_at AS pass_created_at, p.updated_at AS pass_updated_at
  FROM feeds f JOIN wallets w ON w.id = f.owner_id LEFT JOIN pass_offers p ON p.feed_id = f.id AND p.is_active = 1`

export function feedStore(sql: Sql): FeedStore {
  async function byId(id: string) {
    const row = await sql.get<FeedRow>(q`${FEED_SELECT} WHERE f.id = ${id}`)
    return row ? feedRecord(row) : undefined
  }
  return {
    byId,
    // One writer at a time (the embedded engine): a row read in a transaction is held by being read there. An engine
    // with concurrent writers overrides these two (store/postgres/stores.ts).
    held: byId,
    activeCountOf: async (ownerId) =>
      Number((await sql.get<{ n: number }>(q`SELECT COUNT(*) AS n FROM feeds WHERE owner_id = ${ownerId} AND is_active = 1`))!.n),
    async insert(row) {
      await sql.run(q`INSERT INTO feeds (id, owner_id, category_id, name, description, image_cid, tags, created_at, updated_at)
        VALUES (${row.id}, ${row.owner_id}, ${row.category_id}, ${row.name}, ${row.description}, ${row.image_cid},
        ${textListJson(row.tags)}, ${row.now}, ${row.now})`)
      await sql.run(upsertDoc(feedDoc(row)))
    },
    async update(id, patch, now) {
      const { tags, is_active, taken_down, ...rest } = patch
      const values: Record<string, string | number | null> = { ...rest }
      if (tags !== undefined) values.tags = textListJson(tags)
      if (is_active !== undefined) values.is_active = is_active ? 1 : 0
      if (taken_down !== undefined) values.taken_down = taken_down ? 1 : 0
      const changed = await patchRow(sql, 'feeds', id, values, now)
      // Its search document's words follow its own, in the same transaction.
      if (changed && (patch.name !== undefined || patch.description !== undefined || tags !== undefined))
        await sql.run(upsertDoc(feedDoc((await byId(id))!)))
      return changed
    },
    async lockOwner() {},
    async list(filter) {
      // A taken-down feed is inactive, but not among the inactive ones either: it is in no listing at all.
      const where: Query[] = [q`f.total_entries >= ${filter.minEntries}`, q`f.taken_down = 0`]
      if (filter.isActive !== undefined) where.push(q`f.is_active = ${filter.isActive ? 1 : 0}`)
      if (filter.ownerId) where.push(q`f.owner_id = ${filter.ownerId}`)
      if (filter.categoryId) where.push(q`f.category_id = ${filter.categoryId}`)
      // tag_lc is lower(tag) as the engine's triggers make it: A-Z folded, nothing else (an É tag is found as É only).
      if (filter.tags?.length)
        where.push(
          q`f.id IN (SELECT feed_id FROM feed_tags WHERE tag_lc IN (${join(
            filter.tags.map((tag) => q`${sqlLower(tag)}`),
            ', ',
          )}))`,
        )
      if (filter.search) {
        const pattern = `%${sqlLower(filter.search).replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        where.push(q`(lower(f.name) LIKE ${pattern} ESCAPE '\\' OR lower(COALESCE(f.description, '')) LIKE ${pattern} ESCAPE '\\')`)
      }
      if (filter.createdBefore !== undefined) where.push(q`f.created_at <= ${filter.createdBefore}`)
      if (filter.createdAfter !== undefined) where.push(q`f.created_at >= ${filter.createdAfter}`)
      if (filter.beforeId) where.push(q`f.id < ${filter.beforeId}`)
      const ranked = filter.order && filter.order !== 'newest' ? RANKED_BY[filter.order] : null
      if (ranked && filter.beforeRanked) {
        const [figure, id] = filter.beforeRanked
        where.push(q`(${ranked} < ${figure} OR (${ranked} = ${figure} AND f.id < ${id}))`)
      }
      const order = ranked ? q`${ranked} DESC, f.id DESC` : q`f.id DESC`
      const rows = await sql.all<FeedRow>(q`${FEED_SELECT} WHERE ${join(where, ' AND ')} ORDER BY ${order} LIMIT ${filter.limit}`)
      return rows.map(feedRecord)
    },
  }
}
