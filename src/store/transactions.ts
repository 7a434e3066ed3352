import { join, q, type Query, type Sql } from './query.ts'
import type { TransactionRecord } from '../models/records.ts'

export interface TransactionFilter {
  payer?: string
  payTo?: string
  entryId?: string
  feedId?: string
  network?: string
}

export interface TransactionStore {
  byId(id: string): Promise<TransactionRecord | undefined>
  byHash(hash: string): Promise<TransactionRecord | undefined>
  insert(t: TransactionRecord): Promise<void>
  list(filter: TransactionFilter, beforeId: string | undefined, limit: number): Promise<TransactionRecord[]>
  /** The exact count read from the tallies (at most one filter set); null when it must be counted. */
  tallied(filter: TransactionFilter): Promise<number | null>
  /** Counted through an index (the cost grows with the matching rows). */
  count(filter: TransactionFilter): Promise<number>
  /** Names the network of the rows that name none (recorded before 027, or by hand): those of `network`. */
  nameNetwork(network: string): Promise<void>
}

/** A transactions row as the database returns it (a row written by hand since this start may name no network). */
interface TransactionRow extends Omit<TransactionRecord, 'amount' | 'network'> {
  amount: string
  network: string | null
}

const toRecord = (row: TransactionRow): TransactionRecord => ({
  ...row,
  amount: BigInt(row.amount),
  created_at: Number(row.created_at),
  network: row.network ?? UNNAMED_NETWORK,
})

/** What a row that names no network is shown as: none is named at each start (nameNetwork), so only one written by hand since. */
export const UNNAMED_NETWORK = 'unknown'

const SELECT = q`SELECT id, piid, payer, pay_to, CAST(amount AS TEXT) AS amount, asset, entry_id, transaction_hash, created_at, kind,
  feed_id, network FROM transactions`

function where(filter: TransactionFilter, beforeId?: string): Query {
  const clauses: Query[] = []
  if (filter.payer) clauses.push(q`payer_lc = ${filter.payer.toLowerCase()}`)
  if (filter.payTo) clauses.push(q`pay_to_lc = ${filter.payTo.toLowerCase()}`)
  if (filter.entryId) clauses.push(q`entry_id = ${filter.entryId}`)
  if (filter.feedId) clauses.push(q`feed_id = ${filter.feedId}`)
  if (filter.network) clauses.push(q`network = ${filter.network}`)
  if (beforeId) clauses.push(q`id < ${beforeId}`)
  return clauses.length ? q`WHERE ${join(clauses, ' AND ')}` : q``
}

export function transactionStore(sql: Sql): TransactionStore {
  const one = async (query: Query) => {
    const row = await sql.get<TransactionRow>(query)
    return row ? toRecord(row) : undefined
  }
  const count = async (query: Query) => {
    const row = await sql.get<{ n: number }>(query)
    return row ? Number(row.n) : 0
  }
  return {
    byId: (id) => one(q`${SELECT} WHERE id = ${id}`),
    byHash: (hash) => one(q`${SELECT} WHERE transaction_hash = ${hash.toLowerCase()}`),
    async insert(t) {
      await sql.run(q`INSERT INTO transactions
        (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id, transaction_hash, created_at, kind, feed_id, network)
        VALUES (${t.id}, ${t.piid}, ${t.payer}, ${t.payer.toLowerCase()}, ${t.pay_to}, ${t.pay_to.toLowerCase()}, ${t.amount},
          ${t.asset}, ${t.entry_id}, ${t.transaction_hash.toLowerCase()}, ${t.created_at}, ${t.kind}, ${t.feed_id}, ${t.network})`)
    },
    list: async (filter, beforeId, limit) =>
      (await sql.all<TransactionRow>(q`${SELECT} ${where(filter, beforeId)} ORDER BY id DESC LIMIT ${limit}`)).map(toRecord),
    async tallied(filter) {
      if (filter.network !== undefined) return null // counted through its index
      const set = [filter.payer, filter.payTo, filter.entryId, filter.feedId].filter((v) => v !== undefined)
      if (set.length === 0) return count(q`SELECT transactions AS n FROM ledger_totals`)
      if (set.length > 1) return null
      if (filter.entryId !== undefined) return count(q`SELECT total_purchases AS n FROM entries WHERE id = ${filter.entryId}`)
      // A feed's purchases: its entries' sales and its passes', each counted there as it is recorded.
      if (filter.feedId !== undefined) return count(q`SELECT total_purchases AS n FROM feeds WHERE id = ${filter.feedId}`)
      if (filter.payer !== undefined)
        return count(q`SELECT bought AS n FROM address_totals WHERE address_lc = ${filter.payer.toLowerCase()}`)
      return count(q`SELECT sold AS n FROM address_totals WHERE address_lc = ${filter.payTo!.toLowerCase()}`)
    },
    count: (filter) => count(q`SELECT COUNT(*) AS n FROM transactions ${where(filter)}`),
    async nameNetwork(network) {
      await sql.run(q`UPDATE transactions SET network = ${network} WHERE network IS NULL`)
      await sql.run(q`UPDATE payments SET network = ${network} WHERE network IS NULL`)
    },
  }
}
