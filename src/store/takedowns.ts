// The record of operator takedowns: one row per takedown, closed by its reinstatement. At most one stands per target.
import { join, q, type Query, type Sql } from './query.ts'
import type { TakedownState } from '../models/moderation.ts'
import type { TakedownRecord } from '../models/records.ts'

export interface TakedownStore {
  standing(targetId: string): Promise<TakedownRecord | undefined>
  /** False when one stands for the target already (the unique index decides, so two racing takedowns cannot both win). */
  insert(row: Omit<TakedownRecord, 'reinstated_at' | 'reinstate_reason'>): Promise<boolean>
  /** False when it was reinstated already. */
  close(id: string, now: number, reason: string | null): Promise<boolean>
  /** The feeds that stand taken down. */
  standingFeeds(): Promise<string[]>
  /** Newest first. */
  list(state: TakedownState, beforeId: string | undefined, limit: number): Promise<TakedownRecord[]>
}

interface TakedownRow extends Omit<TakedownRecord, 'was_active'> {
  was_active: number
}

const toRecord = (row: TakedownRow): TakedownRecord => ({
  ...row,
  was_active: Number(row.was_active) === 1,
  taken_down_at: Number(row.taken_down_at),
  reinstated_at: row.reinstated_at === null ? null : Number(row.reinstated_at),
})

const SELECT = q`SELECT id, kind, target_id, feed_id, reason, was_active, taken_down_at, reinstated_at, reinstate_reason FROM takedowns`

export function takedownStore(sql: Sql): TakedownStore {
  return {
    async standing(targetId) {
      const row = await sql.get<TakedownRow>(q`${SELECT} WHERE target_id = ${targetId} AND reinstated_at IS NULL`)
      return row ? toRecord(row) : undefined
    },
    insert: async (t) =>
      (await sql.run(q`INSERT INTO takedowns (id, kind, target_id, feed_id, reason, was_active, taken_down_at)
      VALUES (${t.id}, ${t.kind}, ${t.target_id}, ${t.feed_id}, ${t.reason}, ${t.was_active ? 1 : 0}, ${t.taken_down_at})
      ON CONFLICT DO NOTHING`)) === 1,
    close: async (id, now, reason) =>
      (await sql.run(
        q`UPDATE takedowns SET reinstated_at = ${now}, reinstate_reason = ${reason} WHERE id = ${id} AND reinstated_at IS NULL`,
      )) === 1,
    standingFeeds: async () =>
      (await sql.all<{ id: string }>(q`SELECT target_id AS id FROM takedowns WHERE kind = 'feed' AND reinstated_at IS NULL`)).map(
        (row) => row.id,
      ),
    async list(state, beforeId, limit) {
      const where: Query[] = []
      if (state === 'standing') where.push(q`reinstated_at IS NULL`)
      if (state === 'reinstated') where.push(q`reinstated_at IS NOT NULL`)
      if (beforeId) where.push(q`id < ${beforeId}`)
      const rows = await sql.all<TakedownRow>(
        q`${SELECT} ${where.length ? q`WHERE ${join(where, ' AND ')}` : q``} ORDER BY id DESC LIMIT ${limit}`,
      )
      return rows.map(toRecord)
    },
  }
}
