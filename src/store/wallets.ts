import { patchRow, type Db } from './db.ts'
import type { WalletRecord } from '../models/records.ts'

/** A wallets row (with its totals) as SQLite returns it. */
interface WalletRow extends Omit<WalletRecord, 'total_revenue'> { total_revenue: string }

const toRecord = (row: WalletRow): WalletRecord => ({ ...row, total_revenue: BigInt(row.total_revenue) })

// Totals are over active feeds, as listings show them.
const SELECT = `SELECT w.id, w.address, w.network, w.username, w.picture_url, w.created_at, w.updated_at,
  (SELECT COUNT(*) FROM feeds f WHERE f.owner_id = w.id AND f.is_active = 1) AS total_feeds,
  (SELECT COALESCE(SUM(f.total_entries), 0) FROM feeds f WHERE f.owner_id = w.id AND f.is_active = 1) AS total_entries,
  (SELECT CAST(COALESCE(SUM(f.total_revenue), 0) AS TEXT) FROM feeds f WHERE f.owner_id = w.id) AS total_revenue
  FROM wallets w`

export function walletStore(db: Db) {
  const byId = db.query<WalletRow, [string]>(`${SELECT} WHERE w.id = ?`)
  const byAddress = db.query<WalletRow, [string]>(`${SELECT} WHERE w.address_lc = ?`)
  const insert = db.query(
    `INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (address_lc) DO NOTHING`,
  )
  return {
    byId: (id: string): WalletRecord | undefined => { const row = byId.get(id); return row ? toRecord(row) : undefined },
    /** False when the username is taken (case-insensitively); the UNIQUE index decides, also under races. */
    update(id: string, patch: { username?: string | null; picture_url?: string | null }, now: number): boolean {
      const values: Record<string, string | null> = { ...patch }
      if (patch.username !== undefined) values.username_lc = patch.username?.toLowerCase() ?? null
      return patchRow(db, 'wallets', id, values, now)
    },
    byAddress: (address: string): WalletRecord | undefined => { const row = byAddress.get(address.toLowerCase()); return row ? toRecord(row) : undefined },
    /** Creates the wallet unless it exists; returns its id either way. */
    ensure(id: string, address: string, network: string, now: number): string {
      insert.run(id, address, address.toLowerCase(), network, now, now)
      return db.query<{ id: string }, [string]>('SELECT id FROM wallets WHERE address_lc = ?').get(address.toLowerCase())!.id
    },
  }
}
export type WalletStore = ReturnType<typeof walletStore>
