// The market's size at a glance, for /metrics.
import type { Db } from './sqlite/database.ts'

export interface Gauge { name: string; help: string; value: number }

/**
 * Counting wallets, active feeds and active entries scans their tables (see docs/performance.md), and /metrics may
 * be scraped by anyone as often as the rate limit allows: those counts are kept for `sizesMaxAgeMs`. The ledger
 * total (one row of ledger_totals) and the pending payments (a partial index) are cheap, and read on every call.
 */
export function marketGauges(db: Db, sizesMaxAgeMs = 15_000, now = () => performance.now()): () => Gauge[] {
  const sizesQuery = db.query<{ wallets: number; active_feeds: number; active_entries: number }, []>(`SELECT
    (SELECT COUNT(*) FROM wallets) AS wallets,
    (SELECT COUNT(*) FROM feeds WHERE is_active = 1) AS active_feeds,
    (SELECT COUNT(*) FROM entries WHERE is_active = 1) AS active_entries`)
  const liveQuery = db.query<{ transactions: number; pending_payments: number }, []>(`SELECT
    (SELECT transactions FROM ledger_totals) AS transactions,
    (SELECT COUNT(*) FROM payments WHERE status = 'pending') AS pending_payments`)
  let sizes = { wallets: 0, active_feeds: 0, active_entries: 0 }
  let sizesAt = Number.NEGATIVE_INFINITY
  return () => {
    if (now() - sizesAt >= sizesMaxAgeMs) {
      sizes = sizesQuery.get()!
      sizesAt = now()
    }
    const live = liveQuery.get()!
    return [
      { name: 'wallets', help: `Wallets known to the market (counted at most every ${sizesMaxAgeMs / 1000} s).`, value: sizes.wallets },
      { name: 'active_feeds', help: `Feeds not deleted (counted at most every ${sizesMaxAgeMs / 1000} s).`, value: sizes.active_feeds },
      { name: 'active_entries', help: `Entries not deleted (counted at most every ${sizesMaxAgeMs / 1000} s).`, value: sizes.active_entries },
      { name: 'transactions', help: 'Rows in the public ledger.', value: live.transactions },
      { name: 'pending_payments', help: 'Payments whose settlement is not decided yet.', value: live.pending_payments },
    ]
  }
}
