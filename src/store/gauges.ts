// The market's size at a glance, for /metrics.
import type { Db } from './db.ts'

export function marketGauges(db: Db): () => Record<string, number> {
  const gauges = db.query<Record<string, number>, []>(`SELECT
    (SELECT COUNT(*) FROM wallets) AS wallets,
    (SELECT COUNT(*) FROM feeds WHERE is_active = 1) AS active_feeds,
    (SELECT COUNT(*) FROM entries WHERE is_active = 1) AS active_entries,
    (SELECT transactions FROM ledger_totals) AS transactions,
    (SELECT COUNT(*) FROM payments WHERE status = 'pending') AS pending_payments`)
  return () => gauges.get()!
}
