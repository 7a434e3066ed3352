import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, Pagination, UnixSeconds } from './common.ts'

const fields = {
  id: t.String({ description: 'tx_<uuid>' }),
  payer: t.String(),
  pay_to: t.String(),
  amount: Money(),
  asset: t.String({ description: 'the token contract' }),
  entry_id: Nullable(t.String({ description: 'the entry sold; null for a pass' })),
  transaction_hash: t.String({ description: 'the on-chain transfer' }),
  created_at: UnixSeconds(),
  kind: t.Union([t.Literal('entry'), t.Literal('pass')], { description: "what was sold: an entry, or a feed's pass" }),
  feed_id: Nullable(t.String({ description: 'the feed of the entry or pass sold (null only on a row that names neither)' })),
  network: t.String({ description: 'the network the payment was settled on (base, base-sepolia, …)' }),
}
export const TransactionItem = t.Object(fields, { description: 'A settled payment, as listed' })
export type TransactionItem = Static<typeof TransactionItem>
export const Transaction = t.Object({ ...fields, piid: Nullable(t.String()) }, { description: 'A settled payment' })
export type Transaction = Static<typeof Transaction>

export const TransactionList = t.Object({
  transactions: t.Array(TransactionItem),
  data: t.Array(TransactionItem, { description: 'the same list as transactions (read by the official SDK)' }),
  pagination: t.Composite([Pagination, t.Object({ total_count: t.Integer() })]),
})
