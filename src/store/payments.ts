import { join, q, sqlText, type Sql } from './query.ts'

export interface PaymentRow {
  id: string
  payer_lc: string
  nonce: string
  /** The entry it buys; null when it buys a feed's pass (pass_feed_id, for pass_duration_s). */
  entry_id: string | null
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
  /** The instance that settled it, or settles it while pending (its records' instance). */
  settler: string | null
  pass_feed_id: string | null
  pass_duration_s: number | null
  /** The network it was made on (the requirement it met); null on a row written by hand since this start. */
  network: string | null
}

/** What a payment buys: an entry, or a feed's pass for as long as it was offered when the 402 was answered. */
export type Sold =
  | { entry_id: string; pass_feed_id: null; pass_duration_s: null }
  | { entry_id: null; pass_feed_id: string; pass_duration_s: number }

/** An entry, as a payment buys it. */
export const entrySold = (entryId: string): Sold => ({ entry_id: entryId, pass_feed_id: null, pass_duration_s: null })

/** What a payment's row says it buys. */
export const soldBy = (row: Pick<PaymentRow, 'entry_id' | 'pass_feed_id' | 'pass_duration_s'>): Sold =>
  row.entry_id !== null
    ? entrySold(row.entry_id)
    : { entry_id: null, pass_feed_id: row.pass_feed_id!, pass_duration_s: row.pass_duration_s! }

export type NewPayment = Omit<
  PaymentRow,
  | 'entry_id'
  | 'pass_feed_id'
  | 'pass_duration_s'
  | 'amount'
  | 'status'
  | 'error'
  | 'transaction_hash'
  | 'submitted_hash'
  | 'settled_block'
  | 'created_at'
  | 'updated_at'
  | 'settler'
> & { sold: Sold; amount: bigint; now: number; settler: string }

export interface PaymentStore {
  /** The payment of one authorization: a payer's nonce on one network (the same nonce on another chain is another). */
  byKey(network: string, payer: string, nonce: string): Promise<PaymentRow | undefined>
  pending(): Promise<PaymentRow[]>
  /** The pending payment of the purchase (payer, what it buys), if there is one (the oldest, where an older Trellis left several). */
  pendingPurchase(payer: string, sold: Sold): Promise<PaymentRow | undefined>
  /**
   * True when this call created the row (the caller owns the settlement); false when the authorization has a row
   * already, or another payment of the same purchase (payer, entry or pass) is pending (migrations 009, 021).
   */
  insertPending(p: NewPayment): Promise<boolean>
  /**
   * A failed payment may be tried again with the same authorization (e.g. after topping up the balance), unless another
   * payment of the purchase is pending.
   */
  retryFailed(
    id: string,
    sold: Sold,
    payload: string,
    requirements: string,
    submittedBlock: number,
    settler: string,
    now: number,
  ): Promise<boolean>
  /** Our settling transaction is signed: its hash is kept before it is sent. */
  recordSigned(id: string, hash: string, now: number): Promise<boolean>
  markFailed(id: string, error: string, now: number): Promise<boolean>
  /** From 'failed' too: whatever we concluded before, a transfer the chain shows is a purchase. */
  markSettled(id: string, hash: string, block: number, now: number): Promise<boolean>
}

export interface PurchaseStore {
  owns(address: string, entryId: string): Promise<boolean>
  /**
   * Of `entryIds`, those `address` may read without paying at `now`: bought, or of a feed whose pass of theirs runs then
   * (as owns and passes.runningUntil answer for one). One query, however many.
   */
  entitledAmong(address: string, entryIds: readonly string[], now: number): Promise<Set<string>>
  grant(walletId: string, entryId: string, transactionId: string, now: number): Promise<void>
  addToTotals(entryId: string, amount: bigint): Promise<void>
  /** A pass sold counts as a purchase of its feed. */
  addToFeedTotals(feedId: string, amount: bigint): Promise<void>
}

const nullableNumber = (value: number | null) => (value === null ? null : Number(value))
const toRow = (row: PaymentRow): PaymentRow => ({
  ...row,
  pass_duration_s: nullableNumber(row.pass_duration_s),
  x402_version: Number(row.x402_version),
  valid_before: Number(row.valid_before),
  submitted_block: nullableNumber(row.submitted_block),
  settled_block: nullableNumber(row.settled_block),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

const SELECT = q`SELECT id, payer_lc, nonce, entry_id, pay_to, CAST(amount AS TEXT) AS amount, x402_version, payload, requirements,
  valid_before, status, error, transaction_hash, submitted_block, submitted_hash, settled_block, created_at, updated_at, settler,
  pass_feed_id, pass_duration_s, network FROM payments`

/** The purchase a payment belongs to, as a condition on `alias` (payments' rows): the same payer is the caller's. */
const samePurchase = (alias: 'payments' | 'o', sold: Sold) =>
  sold.entry_id !== null ? q`${sqlText(alias)}.entry_id = ${sold.entry_id}` : q`${sqlText(alias)}.pass_feed_id = ${sold.pass_feed_id}`

export function paymentStore(sql: Sql): PaymentStore {
  const changed = async (query: ReturnType<typeof q>) => (await sql.run(query)) === 1
  return {
    async byKey(network, payer, nonce) {
      const row = await sql.get<PaymentRow>(
        q`${SELECT} WHERE network = ${network} AND payer_lc = ${payer.toLowerCase()} AND nonce = ${nonce.toLowerCase()}`,
      )
      return row && toRow(row)
    },
    pending: async () => (await sql.all<PaymentRow>(q`${SELECT} WHERE status = 'pending' ORDER BY id`)).map(toRow),
    async pendingPurchase(payer, sold) {
      const row = await sql.get<PaymentRow>(
        q`${SELECT} WHERE payer_lc = ${payer.toLowerCase()} AND ${samePurchase('payments', sold)} AND status = 'pending'
          ORDER BY pending_slot LIMIT 1`,
      )
      return row && toRow(row)
    },
    insertPending: (p) =>
      changed(q`INSERT INTO payments (id, payer_lc, nonce, entry_id, pass_feed_id, pass_duration_s, pay_to, amount, x402_version, payload,
        requirements, valid_before, submitted_block, status, created_at, updated_at, settler, network)
      VALUES (${p.id}, ${p.payer_lc}, ${p.nonce.toLowerCase()}, ${p.sold.entry_id}, ${p.sold.pass_feed_id}, ${p.sold.pass_duration_s},
        ${p.pay_to}, ${p.amount}, ${p.x402_version}, ${p.payload}, ${p.requirements}, ${p.valid_before}, ${p.submitted_block}, 'pending',
        ${p.now}, ${p.now}, ${p.settler}, ${p.network})
      ON CONFLICT DO NOTHING`),
    retryFailed: (id, sold, payload, requirements, submittedBlock, settler, now) =>
      changed(q`UPDATE payments SET status = 'pending', error = NULL, entry_id = ${sold.entry_id},
        pass_feed_id = ${sold.pass_feed_id}, pass_duration_s = ${sold.pass_duration_s},
        payload = ${payload}, requirements = ${requirements}, submitted_block = ${submittedBlock}, submitted_hash = NULL,
        pending_slot = 0, settler = ${settler}, updated_at = ${now}
      WHERE id = ${id} AND status = 'failed' AND NOT EXISTS (SELECT 1 FROM payments o
        WHERE o.payer_lc = payments.payer_lc AND ${samePurchase('o', sold)} AND o.status = 'pending')`),
    recordSigned: (id, hash, now) =>
      changed(q`UPDATE payments SET submitted_hash = ${hash.toLowerCase()}, updated_at = ${now} WHERE id = ${id} AND status = 'pending'`),
    markFailed: (id, error, now) =>
      changed(q`UPDATE payments SET status = 'failed', error = ${error}, updated_at = ${now} WHERE id = ${id} AND status = 'pending'`),
    markSettled: (id, hash, block, now) =>
      changed(q`UPDATE payments SET status = 'settled', transaction_hash = ${hash.toLowerCase()}, settled_block = ${block},
        error = NULL, updated_at = ${now} WHERE id = ${id} AND status IN ('pending', 'failed')`),
  }
}

export function purchaseStore(sql: Sql): PurchaseStore {
  return {
    owns: async (address, entryId) =>
      (await sql.get(q`SELECT 1 AS one FROM purchases p JOIN wallets w ON w.id = p.wallet_id
      WHERE w.address_lc = ${address.toLowerCase()} AND p.entry_id = ${entryId} LIMIT 1`)) !== undefined,
    async entitledAmong(address, entryIds, now) {
      if (entryIds.length === 0) return new Set()
      const lc = address.toLowerCase()
      const rows = await sql.all<{ id: string }>(q`SELECT e.id FROM entries e WHERE e.id IN (${join(
        entryIds.map((id) => q`${id}`),
        ', ',
      )}) AND (EXISTS (SELECT 1 FROM purchases p JOIN wallets w ON w.id = p.wallet_id WHERE w.address_lc = ${lc} AND p.entry_id = e.id)
        OR EXISTS (SELECT 1 FROM passes s WHERE s.feed_id = e.feed_id AND s.holder_lc = ${lc}
          AND s.starts_at <= ${now} AND s.expires_at > ${now}))`)
      return new Set(rows.map((row) => row.id))
    },
    async grant(walletId, entryId, transactionId, now) {
      await sql.run(
        q`INSERT INTO purchases (wallet_id, entry_id, transaction_id, created_at)
          VALUES (${walletId}, ${entryId}, ${transactionId}, ${now}) ON CONFLICT DO NOTHING`,
      )
    },
    async addToFeedTotals(feedId, amount) {
      await sql.run(
        q`UPDATE feeds SET total_purchases = total_purchases + 1, total_revenue = total_revenue + ${amount} WHERE id = ${feedId}`,
      )
    },
    async addToTotals(entryId, amount) {
      await sql.run(
        q`UPDATE entries SET total_purchases = total_purchases + 1, total_revenue = total_revenue + ${amount} WHERE id = ${entryId}`,
      )
      await sql.run(
        q`UPDATE feeds SET total_purchases = total_purchases + 1, total_revenue = total_revenue + ${amount}
          WHERE id = (SELECT feed_id FROM entries WHERE id = ${entryId})`,
      )
    },
  }
}
