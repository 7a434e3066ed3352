import { patchRow, type Db } from './db.ts'
import type { FeedRecord } from '../models/records.ts'

/** A feeds row as SQLite returns it. */
interface FeedRow extends Omit<FeedRecord, 'is_active' | 'tags' | 'total_revenue'> {
  is_active: number
  tags: string // JSON array
  total_revenue: string
}

const toRecord = (row: FeedRow): FeedRecord => ({ ...row, is_active: row.is_active === 1, tags: JSON.parse(row.tags) as string[], total_revenue: BigInt(row.total_revenue) })

export interface FeedFilter {
  ownerId?: string
  categoryId?: string
  tags?: string[]
  minEntries: number
  isActive?: boolean
  createdBefore?: number // from min_age
  createdAfter?: number // from max_age
  beforeId?: string
  limit: number
}

const SELECT = `SELECT f.id, f.owner_id, w.address AS owner_wallet_address, f.category_id, f.name, f.description,
  f.image_cid, f.tags, f.is_active, f.total_entries, f.total_purchases, CAST(f.total_revenue AS TEXT) AS total_revenue,
  f.created_at, f.updated_at FROM feeds f JOIN wallets w ON w.id = f.owner_id`

export type FeedPatch = Partial<Pick<FeedRecord, 'name' | 'description' | 'image_cid' | 'category_id' | 'tags' | 'is_active'>>

export function feedStore(db: Db) {
  const byId = db.query<FeedRow, [string]>(`${SELECT} WHERE f.id = ?`)
  const insert = db.query(
    `INSERT INTO feeds (id, owner_id, category_id, name, description, image_cid, tags, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const activeCount = db.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM feeds WHERE owner_id = ? AND is_active = 1')
  return {
    byId: (id: string): FeedRecord | undefined => { const row = byId.get(id); return row ? toRecord(row) : undefined },
    activeCountOf: (ownerId: string) => activeCount.get(ownerId)!.n,
    insert(row: { id: string; owner_id: string; category_id: string | null; name: string; description: string | null; image_cid: string | null; tags: string[]; now: number }) {
      insert.run(row.id, row.owner_id, row.category_id, row.name, row.description, row.image_cid, JSON.stringify(row.tags), row.now, row.now)
    },
    update(id: string, patch: FeedPatch, now: number) {
      const { tags, is_active, ...rest } = patch
      const values: Record<string, string | number | null> = { ...rest }
      if (tags !== undefined) values.tags = JSON.stringify(tags)
      if (is_active !== undefined) values.is_active = is_active ? 1 : 0
      return patchRow(db, 'feeds', id, values, now)
    },
    list(filter: FeedFilter): FeedRecord[] {
      const where: string[] = ['f.total_entries >= ?']
      const args: (string | number)[] = [filter.minEntries]
      if (filter.isActive !== undefined) where.push('f.is_active = ?'), args.push(filter.isActive ? 1 : 0)
      if (filter.ownerId) where.push('f.owner_id = ?'), args.push(filter.ownerId)
      if (filter.categoryId) where.push('f.category_id = ?'), args.push(filter.categoryId)
      if (filter.tags?.length) {
        where.push(`f.id IN (SELECT feed_id FROM feed_tags WHERE tag_lc IN (${filter.tags.map(() => '?').join(', ')}))`)
        args.push(...filter.tags.map((tag) => tag.toLowerCase()))
      }
      if (filter.createdBefore !== undefined) where.push('f.created_at <= ?'), args.push(filter.createdBefore)
      if (filter.createdAfter !== undefined) where.push('f.created_at >= ?'), args.push(filter.createdAfter)
      if (filter.beforeId) where.push('f.id < ?'), args.push(filter.beforeId)
      const sql = `${SELECT} WHERE ${where.join(' AND ')} ORDER BY f.id DESC LIMIT ?`
      return db.query<FeedRow, (string | number)[]>(sql).all(...args, filter.limit).map(toRecord)
    },
  }
}
export type FeedStore = ReturnType<typeof feedStore>
