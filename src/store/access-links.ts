import type { Db } from './db.ts'
import type { AccessLinkRecord } from '../models/records.ts'

/** An access_links row as SQLite returns it. */
interface AccessLinkRow extends Omit<AccessLinkRecord, 'is_active'> { is_active: number }

const toRecord = (row: AccessLinkRow): AccessLinkRecord => ({ ...row, is_active: row.is_active === 1 })

export function accessLinkStore(db: Db) {
  const byId = db.query<AccessLinkRow, [string]>('SELECT id, entry_id, feed_id, created_by, expires_at, max_uses, current_uses, description, is_active, last_used_at, created_at, updated_at FROM access_links WHERE id = ?')
  const insert = db.query(
    `INSERT INTO access_links (id, entry_id, feed_id, created_by, expires_at, max_uses, description, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  // The conditional UPDATE is the use counter: of N concurrent requests, exactly max_uses change a row.
  const use = db.query(
    `UPDATE access_links SET current_uses = current_uses + 1, last_used_at = ?1
     WHERE id = ?2 AND is_active = 1 AND expires_at > ?1 AND (max_uses IS NULL OR current_uses < max_uses)`,
  )
  const deactivate = db.query('UPDATE access_links SET is_active = 0, updated_at = ? WHERE id = ?')
  return {
    byId: (id: string): AccessLinkRecord | undefined => { const row = byId.get(id); return row ? toRecord(row) : undefined },
    insert(l: Pick<AccessLinkRecord, 'id' | 'entry_id' | 'feed_id' | 'created_by' | 'expires_at' | 'max_uses' | 'description'> & { now: number }) {
      insert.run(l.id, l.entry_id, l.feed_id, l.created_by, l.expires_at, l.max_uses, l.description, l.now, l.now)
    },
    use: (id: string, now: number) => use.run(now, id).changes === 1,
    deactivate: (id: string, now: number) => deactivate.run(now, id).changes === 1,
    listForEntry(entryId: string, beforeId: string | undefined, limit: number): AccessLinkRecord[] {
      if (beforeId) return db.query<AccessLinkRow, [string, string, number]>('SELECT id, entry_id, feed_id, created_by, expires_at, max_uses, current_uses, description, is_active, last_used_at, created_at, updated_at FROM access_links WHERE entry_id = ? AND id < ? ORDER BY id DESC LIMIT ?').all(entryId, beforeId, limit).map(toRecord)
      return db.query<AccessLinkRow, [string, number]>('SELECT id, entry_id, feed_id, created_by, expires_at, max_uses, current_uses, description, is_active, last_used_at, created_at, updated_at FROM access_links WHERE entry_id = ? ORDER BY id DESC LIMIT ?').all(entryId, limit).map(toRecord)
    },
  }
}
export type AccessLinkStore = ReturnType<typeof accessLinkStore>
