import { join, q, type Query, type Sql } from './query.ts'
import { patchRow } from './patch.ts'
import type { CategoryRecord } from '../models/records.ts'

export type CategoryPatch = Partial<Pick<CategoryRecord, 'name' | 'description' | 'icon_url' | 'is_active'>>

export interface CategoryStore {
  byId(id: string): Promise<CategoryRecord | undefined>
  byName(name: string): Promise<CategoryRecord | undefined>
  /** False when the name is taken (case-insensitively). */
  insert(row: { id: string; name: string; description: string | null; icon_url: string | null; now: number }): Promise<boolean>
  /** False when the new name is taken (case-insensitively). */
  update(id: string, patch: CategoryPatch, now: number): Promise<boolean>
  count(): Promise<number>
  /** Ordered by name, then id; the cursor is the last (name_lc, id) seen. */
  list(filter: { search?: string; isActive?: boolean; after?: { name: string; id: string }; limit: number }): Promise<CategoryRecord[]>
}

/** A categories row as the database returns it. */
interface CategoryRow extends Omit<CategoryRecord, 'is_active'> {
  is_active: number
}

const toRecord = (row: CategoryRow): CategoryRecord => ({
  ...row,
  is_active: Number(row.is_active) === 1,
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

const SELECT = q`SELECT id, name, description, icon_url, is_active, created_at, updated_at FROM categories`

export function categoryStore(sql: Sql): CategoryStore {
  const one = async (query: Query) => {
    const row = await sql.get<CategoryRow>(query)
    return row ? toRecord(row) : undefined
  }
  return {
    byId: (id) => one(q`${SELECT} WHERE id = ${id}`),
    byName: (name) => one(q`${SELECT} WHERE name_lc = ${name.toLowerCase()}`),
    insert: async (row) =>
      (await sql.run(q`INSERT INTO categories (id, name, name_lc, description, icon_url, is_active, created_at, updated_at)
      VALUES (${row.id}, ${row.name}, ${row.name.toLowerCase()}, ${row.description}, ${row.icon_url}, 1, ${row.now}, ${row.now})
      ON CONFLICT (name_lc) DO NOTHING`)) === 1,
    update(id, patch, now) {
      const { is_active, ...rest } = patch
      const values: Record<string, string | number | null> = { ...rest }
      if (is_active !== undefined) values.is_active = is_active ? 1 : 0
      if (patch.name !== undefined) values.name_lc = patch.name.toLowerCase()
      return patchRow(sql, 'categories', id, values, now)
    },
    count: async () => Number((await sql.get<{ n: number }>(q`SELECT COUNT(*) AS n FROM categories`))!.n),
    async list(filter) {
      const where: Query[] = []
      if (filter.search) where.push(q`name_lc LIKE ${`%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`} ESCAPE '\\'`)
      if (filter.isActive !== undefined) where.push(q`is_active = ${filter.isActive ? 1 : 0}`)
      if (filter.after) {
        const name = filter.after.name.toLowerCase()
        where.push(q`(name_lc > ${name} OR (name_lc = ${name} AND id > ${filter.after.id}))`)
      }
      const rows = await sql.all<CategoryRow>(
        q`${SELECT} ${where.length ? q`WHERE ${join(where, ' AND ')}` : q``} ORDER BY name_lc, id LIMIT ${filter.limit}`,
      )
      return rows.map(toRecord)
    },
  }
}
