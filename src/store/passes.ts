// The passes held: one row per pass sold, from starts_at to expires_at (migration 021).
import { q, type Sql } from './query.ts'
import type { PassRecord } from '../models/records.ts'

export interface NewPass {
  id: string
  feed_id: string
  holder_lc: string
  duration_s: number
  transaction_id: string
  now: number
}

export interface PassStore {
  /**
   * Records a pass sold: it runs from the end of the holder's pass to the feed running then (buying again extends
   * it), or from now, for `duration_s`. Inside the transaction that records the sale.
   */
  grant(pass: NewPass): Promise<PassRecord>
  /** When the pass of `holderLc` to the feed running at `now` ends (the next one, bought ahead, starts then); null: none runs. */
  runningUntil(holderLc: string, feedId: string, now: number): Promise<number | null>
  /** The pass a sale made. */
  byTransaction(transactionId: string): Promise<PassRecord | undefined>
  byId(id: string): Promise<PassRecord | undefined>
  /**
   * Marks ended, at `now`, up to `limit` passes whose time is over (a trigger tells pass.expired of those no pass of
   * the same holder and feed runs on from: migration 022). How many.
   */
  markEnded(now: number, limit: number): Promise<number>
  /** A holder's passes, newest first, before `beforeId`. */
  listByHolder(holderLc: string, beforeId: string | undefined, limit: number): Promise<PassRecord[]>
}

type PassRow = PassRecord

const toRecord = (row: PassRow): PassRecord => ({
  ...row,
  starts_at: Number(row.starts_at),
  expires_at: Number(row.expires_at),
  created_at: Number(row.created_at),
})

const SELECT = q`SELECT id, feed_id, holder_lc, starts_at, expires_at, transaction_id, created_at FROM passes`

export function passStore(sql: Sql): PassStore {
  const one = async (query: ReturnType<typeof q>) => {
    const row = await sql.get<PassRow>(query)
    return row && toRecord(row)
  }
  return {
    async grant(p) {
      const running = await sql.get<{ end: number | null }>(
        q`SELECT MAX(expires_at) AS end FROM passes WHERE feed_id = ${p.feed_id} AND holder_lc = ${p.holder_lc}`,
      )
      const starts = Math.max(p.now, Number(running?.end ?? 0))
      await sql.run(q`INSERT INTO passes (id, feed_id, holder_lc, starts_at, expires_at, transaction_id, created_at)
        VALUES (${p.id}, ${p.feed_id}, ${p.holder_lc}, ${starts}, ${starts + p.duration_s}, ${p.transaction_id}, ${p.now})`)
      return (await one(q`${SELECT} WHERE id = ${p.id}`))!
    },
    async runningUntil(holderLc, feedId, now) {
      const row = await sql.get<{ until: number | null }>(q`SELECT MAX(expires_at) AS until FROM passes WHERE feed_id = ${feedId}
        AND holder_lc = ${holderLc} AND starts_at <= ${now} AND expires_at > ${now}`)
      return row?.until === null || row?.until === undefined ? null : Number(row.until)
    },
    byTransaction: (transactionId) => one(q`${SELECT} WHERE transaction_id = ${transactionId}`),
    byId: (id) => one(q`${SELECT} WHERE id = ${id}`),
    markEnded: (now, limit) =>
      sql.run(q`UPDATE passes SET ended_at = ${now} WHERE id IN (SELECT id FROM passes WHERE ended_at IS NULL
        AND expires_at <= ${now} ORDER BY expires_at LIMIT ${limit})`),
    listByHolder: async (holderLc, beforeId, limit) =>
      (
        await sql.all<PassRow>(
          beforeId
            ? q`${SELECT} WHERE holder_lc = ${holderLc} AND id < ${beforeId} ORDER BY id DESC LIMIT ${limit}`
            : q`${SELECT} WHERE holder_lc = ${holderLc} ORDER BY id DESC LIMIT ${limit}`,
        )
      ).map(toRecord),
  }
}
