import type { Db } from './db.ts'

export interface PaymentRow {
  id: string
  payer_lc: string
  nonce: string
  entry_id: string
  pay_to: string
  amount: string
  x402_version: number
  payload: string
  requirements: string
  valid_before: number
  status: 'pending' | 'settled' | 'failed'
  error: string | null
  transaction_hash: string | null
  /** Chain head when settlement was asked for: searches for the authorization's fate start here. */
  submitted_block: number | null
  /** Our own settling transaction (local mode), recorded before it was sent. */
  submitted_hash: string | null
  settled_block: number | null
  created_at: number
  updated_at: number
}

export type NewPayment = Omit<PaymentRow, 'amount' | 'status' | 'error' | 'transaction_hash' | 'submitted_hash' | 'settled_block' | 'created_at' | 'updated_at'> & { amount: bigint; now: number }

const SELECT = `SELECT id, payer_lc, nonce, entry_id, pay_to, CAST(amount AS TEXT) AS amount, x402_version, payload, requirements,
  valid_before, status, error, transaction_hash, submitted_block, submitted_hash, settled_block, created_at, updated_at FROM payments`

export function paymentStore(db: Db) {
  const byKey = db.query<PaymentRow, [string, string]>(`${SELECT} WHERE payer_lc = ? AND nonce = ?`)
  const pending = db.query<PaymentRow, []>(`${SELECT} WHERE status = 'pending' ORDER BY id`)
  const insert = db.query(
    `INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before, submitted_block, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (payer_lc, nonce) DO NOTHING`,
  )
  const retry = db.query(
    `UPDATE payments SET status = 'pending', error = NULL, entry_id = ?, payload = ?, requirements = ?, submitted_block = ?, submitted_hash = NULL, updated_at = ?
     WHERE id = ? AND status = 'failed'`,
  )
  const signed = db.query(`UPDATE payments SET submitted_hash = ?, updated_at = ? WHERE id = ? AND status = 'pending'`)
  const failed = db.query(`UPDATE payments SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status = 'pending'`)
  // From 'failed' too: whatever we concluded before, a transfer the chain shows is a purchase.
  const settled = db.query(
    `UPDATE payments SET status = 'settled', transaction_hash = ?, settled_block = ?, error = NULL, updated_at = ? WHERE id = ? AND status IN ('pending', 'failed')`,
  )
  return {
    byKey: (payer: string, nonce: string) => byKey.get(payer.toLowerCase(), nonce.toLowerCase()),
    pending: () => pending.all(),
    /** True when this call created the row (the caller owns the settlement). */
    insertPending: (p: NewPayment) =>
      insert.run(p.id, p.payer_lc, p.nonce.toLowerCase(), p.entry_id, p.pay_to, p.amount, p.x402_version, p.payload, p.requirements, p.valid_before, p.submitted_block, p.now, p.now).changes === 1,
    /** A failed payment may be tried again with the same authorization (e.g. after topping up the balance). */
    retryFailed: (id: string, entryId: string, payload: string, requirements: string, submittedBlock: number, now: number) =>
      retry.run(entryId, payload, requirements, submittedBlock, now, id).changes === 1,
    /** Our settling transaction is signed: its hash is kept before it is sent. */
    recordSigned: (id: string, hash: string, now: number) => signed.run(hash.toLowerCase(), now, id).changes === 1,
    markFailed: (id: string, error: string, now: number) => failed.run(error, now, id).changes === 1,
    markSettled: (id: string, hash: string, block: number, now: number) => settled.run(hash.toLowerCase(), block, now, id).changes === 1,
  }
}
export type PaymentStore = ReturnType<typeof paymentStore>

export function purchaseStore(db: Db) {
  const owns = db.query<{ n: number }, [string, string]>(
    `SELECT COUNT(*) AS n FROM purchases p JOIN wallets w ON w.id = p.wallet_id WHERE w.address_lc = ? AND p.entry_id = ?`,
  )
  const insert = db.query('INSERT INTO purchases (wallet_id, entry_id, transaction_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING')
  const addTotals = db.query(
    `UPDATE entries SET total_purchases = total_purchases + 1, total_revenue = total_revenue + ?1 WHERE id = ?2`,
  )
  const addFeedTotals = db.query(
    `UPDATE feeds SET total_purchases = total_purchases + 1, total_revenue = total_revenue + ?1 WHERE id = (SELECT feed_id FROM entries WHERE id = ?2)`,
  )
  return {
    owns: (address: string, entryId: string) => owns.get(address.toLowerCase(), entryId)!.n > 0,
    grant: (walletId: string, entryId: string, transactionId: string, now: number) => insert.run(walletId, entryId, transactionId, now),
    addToTotals(entryId: string, amount: bigint) {
      addTotals.run(amount, entryId)
      addFeedTotals.run(amount, entryId)
    },
  }
}
export type PurchaseStore = ReturnType<typeof purchaseStore>
