import { q, type Sql } from './query.ts'
import type { AccessLinkRecord } from '../models/records.ts'

export type NewAccessLink = Pick<
  AccessLinkRecord,
  'id' | 'entry_id' | 'feed_id' | 'created_by' | 'expires_at' | 'max_uses' | 'description'
> & { now: number }

export interface AccessLinkStore {
  byId(id: string): Promise<AccessLinkRecord | undefined>
  insert(link: NewAccessLink): Promise<void>
  /** Counts one use: of N concurrent calls, exactly as many as uses remain answer true. */
  use(id: string, now: number): Promise<boolean>
  deactivate(id: string, now: number): Promise<boolean>
  listForEntry(entryId: string, beforeId: string | undefined, limit: number): Promise<AccessLinkRecord[]>
}

/** An access_links row as the database returns it. */
interface AccessLinkRow extends Omit<AccessLinkRecord, 'is_active'> {
  is_active: number
}

const num = (value: number | null) => (value === null ? null : Number(value))
const toRecord = (row: AccessLinkRow): AccessLinkRecord => ({
  ...row,
  is_active: Number(row.is_active) === 1,
  expires_at: Number(row.expires_at),
  max_uses: num(row.max_uses),
  current_uses: Number(row.current_uses),
  last_used_at: num(row.last_used_at),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

const SELECT = q`SELECT id, entry_id, feed_id, created_by, expires_at, max_uses, current_uses, description, is_active, last_used_at,
  created_at, updated_at FROM access_links`

export function accessLinkStore(sql: Sql): AccessLinkStore {
  return {
    async byId(id) {
      const row = await sql.get<AccessLinkRow>(q`${SELECT} WHERE id = ${id}`)
      return row ? toRecord(row) : undefined
    },
    async insert(l) {
      await sql.run(q`INSERT INTO access_links
        (id, entry_id, feed_id, created_by, expires_at, max_uses, description, created_at, updated_at)
        VALUES (${l.id}, ${l.entry_id}, ${l.feed_id}, ${l.created_by}, ${l.expires_at}, ${l.max_uses}, ${l.description},
        ${l.now}, ${l.now})`)
    },
    // The conditional UPDATE is the use counter.
    use: async (id, now) =>
      (await sql.run(q`UPDATE access_links SET current_uses = current_uses + 1, last_used_at = ${now}
      WHERE id = ${id} AND is_active = 1 AND expires_at > ${now} AND (max_uses IS NULL OR current_uses < max_uses)`)) === 1,
    deactivate: async (id, now) => (await sql.run(q`UPDATE access_links SET is_active = 0, updated_at = ${now} WHERE id = ${id}`)) === 1,
    async listForEntry(entryId, beforeId, limit) {
      const rows = await sql.all<AccessLinkRow>(
        beforeId
          ? q`${SELECT} WHERE entry_id = ${entryId} AND id < ${beforeId} ORDER BY id DESC LIMIT ${limit}`
          : q`${SELECT} WHERE entry_id = ${entryId} ORDER BY id DESC LIMIT ${limit}`,
      )
      return rows.map(toRecord)
    },
  }
}
