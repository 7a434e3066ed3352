// The public ledger: one row per recorded purchase.
import { CHAINS, chainNamed } from '../config/networks.ts'
import type { TransactionFilter } from '../store/transactions.ts'
import type { Records } from '../store/stores.ts'
import type { TransactionRecord } from '../models/records.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { isUuid } from '../lib/ids.ts'
import { fail } from './errors.ts'

const COUNT_TTL_MS = 60_000
const MAX_CACHED_COUNTS = 1000

/** Transaction ids are shown as tx_<uuid>; both forms are accepted. */
export const publicTransactionId = (id: string) => `tx_${id}`

export function transactionService(d: { records: Records }) {
  const transactions = d.records.read.transactions
  /** The ledger's pages and counts: long reads, which a replica may serve (store/records.ts). */
  const ledger = d.records.reads.transactions
  // With two or more filters total_count is counted, and may then be up to 60 s old; otherwise it is a tally.
  const counts = new Map<string, { value: number; at: number }>()

  function parseId(raw: string): string {
    const id = raw.startsWith('tx_') ? raw.slice(3) : raw
    if (!isUuid(id)) fail('INVALID_PARAMETER', 'invalid transaction id', 'id must be a UUID, optionally prefixed with tx_')
    return id.toLowerCase()
  }

  return {
    async get(raw: string): Promise<TransactionRecord> {
      return (await transactions.byId(parseId(raw))) ?? fail('NOT_FOUND', 'transaction not found')
    },
    async byHash(hash: string): Promise<TransactionRecord> {
      if (!/^0x[0-9a-fA-F]{64}$/.test(hash))
        fail('INVALID_PARAMETER', 'invalid transaction hash', 'hash must be 0x-prefixed and 66 characters long')
      return (
        (await transactions.byHash(hash)) ??
        fail('NOT_FOUND', 'transaction not found', 'no payment with this hash was recorded by this service')
      )
    },
    validateFilter(q: { payer?: string; pay_to?: string; entry_id?: string; feed_id?: string; network?: string }): TransactionFilter {
      if (q.payer !== undefined && !isWalletAddress(q.payer))
        fail('INVALID_PARAMETER', 'invalid payer', 'payer must be a 0x-prefixed address')
      if (q.pay_to !== undefined && !isWalletAddress(q.pay_to))
        fail('INVALID_PARAMETER', 'invalid pay_to', 'pay_to must be a 0x-prefixed address')
      if (q.entry_id !== undefined && !isUuid(q.entry_id)) fail('INVALID_PARAMETER', 'invalid entry_id', 'entry_id must be a UUID')
      if (q.feed_id !== undefined && !isUuid(q.feed_id)) fail('INVALID_PARAMETER', 'invalid feed_id', 'feed_id must be a UUID')
      if (q.network !== undefined && chainNamed(q.network) === undefined)
        fail('INVALID_PARAMETER', 'invalid network', `network must be one of ${Object.keys(CHAINS).join(', ')}`)
      return { payer: q.payer, payTo: q.pay_to, entryId: q.entry_id?.toLowerCase(), feedId: q.feed_id?.toLowerCase(), network: q.network }
    },
    list: (filter: TransactionFilter, beforeId: string | undefined, limit: number) => ledger.list(filter, beforeId, limit),
    async count(filter: TransactionFilter): Promise<number> {
      const tallied = await transactions.tallied(filter)
      if (tallied !== null) return tallied
      const key = JSON.stringify([filter.payer?.toLowerCase(), filter.payTo?.toLowerCase(), filter.entryId, filter.feedId, filter.network])
      const cached = counts.get(key)
      if (cached && Date.now() - cached.at < COUNT_TTL_MS) return cached.value
      const value = await ledger.count(filter)
      if (counts.size >= MAX_CACHED_COUNTS) counts.clear()
      counts.set(key, { value, at: Date.now() })
      return value
    },
  }
}
export type TransactionService = ReturnType<typeof transactionService>
