// What the records hold, counted: the market's size for /metrics, a backup's manifest, and the content the records
// name (every entry's item, withdrawn ones too, every stored cover image, every feed's cover). Records are never
// removed, so the named content only grows; what is not named, `trellis gc` may remove.
import { q, type Sql } from './query.ts'

export interface InventoryStore {
  namedCids(): Promise<string[]>
  /** Every row, deleted ones too: what a backup holds. */
  rows(): Promise<{ feeds: number; entries: number; transactions: number }>
  /** Scans three tables: callers keep the answer for a while. */
  sizes(): Promise<{ wallets: number; active_feeds: number; active_entries: number }>
  /** Cheap (one row of ledger_totals and a partial index): may be read on every call. */
  live(): Promise<{ transactions: number; pending_payments: number }>
}

type Counts<K extends string> = Record<K, number>
const numbers = <K extends string>(row: Counts<K>): Counts<K> =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as Counts<K>

export function inventoryStore(sql: Sql): InventoryStore {
  return {
    namedCids: async () =>
      (
        await sql.all<{ cid: string }>(q`SELECT cid FROM entries UNION SELECT cid FROM images UNION
      SELECT image_cid AS cid FROM feeds WHERE image_cid IS NOT NULL ORDER BY cid`)
      ).map((r) => r.cid),
    rows: async () =>
      numbers(
        (await sql.get<Counts<'feeds' | 'entries' | 'transactions'>>(q`SELECT
      (SELECT COUNT(*) FROM feeds) AS feeds, (SELECT COUNT(*) FROM entries) AS entries,
      (SELECT COUNT(*) FROM transactions) AS transactions`))!,
      ),
    sizes: async () =>
      numbers(
        (await sql.get<Counts<'wallets' | 'active_feeds' | 'active_entries'>>(q`SELECT
      (SELECT COUNT(*) FROM wallets) AS wallets,
      (SELECT COUNT(*) FROM feeds WHERE is_active = 1) AS active_feeds,
      (SELECT COUNT(*) FROM entries WHERE is_active = 1) AS active_entries`))!,
      ),
    live: async () =>
      numbers(
        (await sql.get<Counts<'transactions' | 'pending_payments'>>(q`SELECT
      (SELECT transactions FROM ledger_totals) AS transactions,
      (SELECT COUNT(*) FROM payments WHERE status = 'pending') AS pending_payments`))!,
      ),
  }
}
