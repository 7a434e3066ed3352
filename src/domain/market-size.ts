// The market's size at a glance, for /metrics.
import type { Stores } from '../store/stores.ts'

export interface Gauge {
  name: string
  help: string
  value: number
}

/**
 * Counting wallets, active feeds and active entries scans their tables (see docs/performance.md), and /metrics may
 * be scraped by anyone as often as the rate limit allows: those counts are kept for `sizesMaxAgeMs`. The ledger
 * total and the pending payments are cheap, and read on every call.
 */
export function marketSize(read: Pick<Stores, 'inventory'>, sizesMaxAgeMs = 15_000, now = () => performance.now()): () => Promise<Gauge[]> {
  let sizes = { wallets: 0, active_feeds: 0, active_entries: 0 }
  let sizesAt = Number.NEGATIVE_INFINITY
  return async () => {
    if (now() - sizesAt >= sizesMaxAgeMs) {
      sizes = await read.inventory.sizes()
      sizesAt = now()
    }
    const live = await read.inventory.live()
    const counted = `(counted at most every ${sizesMaxAgeMs / 1000} s)`
    return [
      { name: 'wallets', help: `Wallets known to the market ${counted}.`, value: sizes.wallets },
      { name: 'active_feeds', help: `Feeds not deleted ${counted}.`, value: sizes.active_feeds },
      { name: 'active_entries', help: `Entries not deleted ${counted}.`, value: sizes.active_entries },
      { name: 'transactions', help: 'Rows in the public ledger.', value: live.transactions },
      { name: 'pending_payments', help: 'Payments whose settlement is not decided yet.', value: live.pending_payments },
    ]
  }
}
