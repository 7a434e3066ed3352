// The ledger's own consistency, in SQL: totals equal sums of the ledger, every settled payment has exactly one
// ledger row and every ledger row a settled payment and an entitlement. And the rows to check against the chain.
import type { Db } from './db.ts'

export interface LedgerRowToProve {
  id: string
  transaction_hash: string
  payer_lc: string
  pay_to_lc: string
  amount: string
  nonce: string | null
}

export interface FailedSubmission {
  id: string
  payer_lc: string
  nonce: string
  pay_to: string
  amount: string
  submitted_block: number
}

const INCONSISTENCIES: [string, string][] = [
  ['entry totals differ from the ledger', `
    SELECT e.id AS subject FROM entries e
    LEFT JOIN (SELECT entry_id, COUNT(*) AS n, SUM(amount) AS total FROM transactions GROUP BY entry_id) t ON t.entry_id = e.id
    WHERE e.total_purchases != COALESCE(t.n, 0) OR e.total_revenue != COALESCE(t.total, 0)`],
  ['feed totals differ from the ledger', `
    SELECT f.id AS subject FROM feeds f
    LEFT JOIN (SELECT e.feed_id, COUNT(*) AS n, SUM(t.amount) AS total FROM transactions t JOIN entries e ON e.id = t.entry_id GROUP BY e.feed_id) s
      ON s.feed_id = f.id
    WHERE f.total_purchases != COALESCE(s.n, 0) OR f.total_revenue != COALESCE(s.total, 0)`],
  ['settled payment without exactly one matching ledger row', `
    SELECT p.id AS subject FROM payments p
    WHERE p.status = 'settled' AND (SELECT COUNT(*) FROM transactions t
      WHERE t.piid = p.id AND t.transaction_hash = p.transaction_hash AND t.amount = p.amount AND t.payer_lc = p.payer_lc
        AND t.pay_to_lc = LOWER(p.pay_to) AND t.entry_id = p.entry_id) != 1`],
  ['ledger row without a settled payment', `
    SELECT t.id AS subject FROM transactions t LEFT JOIN payments p ON p.id = t.piid
    WHERE p.id IS NULL OR p.status != 'settled'`],
  ["ledger row without the buyer's entitlement", `
    SELECT t.id AS subject FROM transactions t
    LEFT JOIN wallets w ON w.address_lc = t.payer_lc
    LEFT JOIN purchases u ON u.wallet_id = w.id AND u.entry_id = t.entry_id
    WHERE u.wallet_id IS NULL`],
]

export function ledgerAuditStore(db: Db) {
  const checks = INCONSISTENCIES.map(([problem, sql]) => ({ problem, query: db.query<{ subject: string }, []>(`${sql} LIMIT 20`) }))
  const rowsAfter = db.query<LedgerRowToProve, [string, number]>(
    `SELECT t.id, t.transaction_hash, t.payer_lc, t.pay_to_lc, CAST(t.amount AS TEXT) AS amount, p.nonce
     FROM transactions t LEFT JOIN payments p ON p.id = t.piid WHERE t.id > ? ORDER BY t.id LIMIT ?`,
  )
  const failedSince = db.query<FailedSubmission, [number]>(
    `SELECT id, payer_lc, nonce, pay_to, CAST(amount AS TEXT) AS amount, submitted_block FROM payments
     WHERE status = 'failed' AND submitted_block IS NOT NULL AND updated_at >= ? ORDER BY id`,
  )
  const lastId = db.query<{ id: string | null }, []>('SELECT MAX(id) AS id FROM transactions')
  const pending = db.query<{ n: number; oldest: number | null }, []>(`SELECT COUNT(*) AS n, MIN(valid_before) AS oldest FROM payments WHERE status = 'pending'`)
  const counts = db.query<{ transactions: number; revenue: string }, []>(`SELECT COUNT(*) AS transactions, CAST(COALESCE(SUM(amount), 0) AS TEXT) AS revenue FROM transactions`)
  const getMeta = db.query<{ value: string }, [string]>('SELECT value FROM meta WHERE key = ?')
  const setMeta = db.query('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
  return {
    /** Each broken rule with up to 20 of the ids that break it. */
    inconsistencies: () => checks.map((c) => ({ problem: c.problem, subjects: c.query.all().map((r) => r.subject) })).filter((c) => c.subjects.length > 0),
    ledgerRowsAfter: (id: string, limit: number) => rowsAfter.all(id, limit),
    lastLedgerId: () => lastId.get()?.id ?? '',
    failedSubmissionsSince: (seconds: number) => failedSince.all(seconds),
    pending: () => pending.get()!,
    totals: () => counts.get()!,
    meta: (key: string) => getMeta.get(key)?.value ?? null,
    setMeta: (key: string, value: string) => void setMeta.run(key, value),
  }
}
export type LedgerAuditStore = ReturnType<typeof ledgerAuditStore>
