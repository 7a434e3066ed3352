import type { Db } from './db.ts'
import type { TransactionRecord } from '../models/records.ts'

/** A transactions row as SQLite returns it. */
interface TransactionRow extends Omit<TransactionRecord, 'amount'> { amount: string }

const toRecord = (row: TransactionRow): TransactionRecord => ({ ...row, amount: BigInt(row.amount) })
const found = (row: TransactionRow | null): TransactionRecord | undefined => (row ? toRecord(row) : undefined)

export interface TransactionFilter {
  payer?: string
  payTo?: string
  entryId?: string
}

const SELECT = `SELECT id, piid, payer, pay_to, CAST(amount AS TEXT) AS amount, asset, entry_id, transaction_hash, created_at FROM transactions`

function where(filter: TransactionFilter, beforeId?: string): { sql: string; args: string[] } {
  const clauses: string[] = []
  const args: string[] = []
  if (filter.payer) clauses.push('payer_lc = ?'), args.push(filter.payer.toLowerCase())
  if (filter.payTo) clauses.push('pay_to_lc = ?'), args.push(filter.payTo.toLowerCase())
  if (filter.entryId) clauses.push('entry_id = ?'), args.push(filter.entryId)
  if (beforeId) clauses.push('id < ?'), args.push(beforeId)
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', args }
}

export function transactionStore(db: Db) {
  const byId = db.query<TransactionRow, [string]>(`${SELECT} WHERE id = ?`)
  const byHash = db.query<TransactionRow, [string]>(`${SELECT} WHERE transaction_hash = ?`)
  const insert = db.query(
    `INSERT INTO transactions (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id, transaction_hash, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const ledgerSize = db.query<{ n: number }, []>('SELECT transactions AS n FROM ledger_totals')
  const entryPurchases = db.query<{ n: number }, [string]>('SELECT total_purchases AS n FROM entries WHERE id = ?')
  const addressBought = db.query<{ n: number }, [string]>('SELECT bought AS n FROM address_totals WHERE address_lc = ?')
  const addressSold = db.query<{ n: number }, [string]>('SELECT sold AS n FROM address_totals WHERE address_lc = ?')
  return {
    byId: (id: string) => found(byId.get(id)),
    byHash: (hash: string) => found(byHash.get(hash.toLowerCase())),
    insert(t: TransactionRecord) {
      insert.run(t.id, t.piid, t.payer, t.payer.toLowerCase(), t.pay_to, t.pay_to.toLowerCase(), t.amount, t.asset, t.entry_id, t.transaction_hash.toLowerCase(), t.created_at)
    },
    list(filter: TransactionFilter, beforeId: string | undefined, limit: number): TransactionRecord[] {
      const w = where(filter, beforeId)
      return db.query<TransactionRow, (string | number)[]>(`${SELECT} ${w.sql} ORDER BY id DESC LIMIT ?`).all(...w.args, limit).map(toRecord)
    },
    /** The exact count read from the tallies (at most one filter set); null when it must be counted. */
    tallied(filter: TransactionFilter): number | null {
      const set = [filter.payer, filter.payTo, filter.entryId].filter((v) => v !== undefined)
      if (set.length === 0) return ledgerSize.get()!.n
      if (set.length > 1) return null
      const row = filter.entryId !== undefined ? entryPurchases.get(filter.entryId)
        : filter.payer !== undefined ? addressBought.get(filter.payer.toLowerCase()) : addressSold.get(filter.payTo!.toLowerCase())
      return row?.n ?? 0
    },
    /** Counted through an index (the cost grows with the matching rows). */
    count(filter: TransactionFilter): number {
      const w = where(filter)
      return db.query<{ n: number }, string[]>(`SELECT COUNT(*) AS n FROM transactions ${w.sql}`).get(...w.args)!.n
    },
  }
}
export type TransactionStore = ReturnType<typeof transactionStore>
