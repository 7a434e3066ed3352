import { patchRow, type Db } from './db.ts'
import type { CategoryRecord } from '../models/records.ts'

/** A categories row as SQLite returns it. */
interface CategoryRow extends Omit<CategoryRecord, 'is_active'> { is_active: number }

const toRecord = (row: CategoryRow): CategoryRecord => ({ ...row, is_active: row.is_active === 1 })
const found = (row: CategoryRow | null): CategoryRecord | undefined => (row ? toRecord(row) : undefined)

const COLUMNS = 'id, name, description, icon_url, is_active, created_at, updated_at'

export function categoryStore(db: Db) {
  const byId = db.query<CategoryRow, [string]>(`SELECT ${COLUMNS} FROM categories WHERE id = ?`)
  const insert = db.query(
    `INSERT INTO categories (id, name, name_lc, description, icon_url, is_active, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (name_lc) DO NOTHING`,
  )
  const byName = db.query<CategoryRow, [string]>(`SELECT ${COLUMNS} FROM categories WHERE name_lc = ?`)
  return {
    byId: (id: string) => found(byId.get(id)),
    byName: (name: string) => found(byName.get(name.toLowerCase())),
    insert: (row: { id: string; name: string; description: string | null; icon_url: string | null; now: number }) =>
      insert.run(row.id, row.name, row.name.toLowerCase(), row.description, row.icon_url, row.now, row.now).changes === 1,
    /** False when the new name is taken (case-insensitively). */
    update(id: string, patch: Partial<Pick<CategoryRecord, 'name' | 'description' | 'icon_url' | 'is_active'>>, now: number): boolean {
      const { is_active, ...rest } = patch
      const values: Record<string, string | number | null> = { ...rest }
      if (is_active !== undefined) values.is_active = is_active ? 1 : 0
      if (patch.name !== undefined) values.name_lc = patch.name.toLowerCase()
      return patchRow(db, 'categories', id, values, now)
    },
    count: () => db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM categories').get()!.n,
    /** Ordered by name, then id; the cursor is the last (name_lc, id) seen. */
    list(filter: { search?: string; isActive?: boolean; after?: { name: string; id: string }; limit: number }): CategoryRecord[] {
      const where: string[] = []
      const args: (string | number)[] = []
      if (filter.search) {
        where.push("name_lc LIKE ? ESCAPE '\\'")
        args.push(`%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
      }
      if (filter.isActive !== undefined) {
        where.push('is_active = ?')
        args.push(filter.isActive ? 1 : 0)
      }
      if (filter.after) {
        where.push('(name_lc > ? OR (name_lc = ? AND id > ?))')
        args.push(filter.after.name.toLowerCase(), filter.after.name.toLowerCase(), filter.after.id)
      }
      const sql = `SELECT ${COLUMNS} FROM categories ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY name_lc, id LIMIT ?`
      return db.query<CategoryRow, (string | number)[]>(sql).all(...args, filter.limit).map(toRecord)
    },
  }
}
export type CategoryStore = ReturnType<typeof categoryStore>
