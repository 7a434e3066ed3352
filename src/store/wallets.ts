import { q, type Sql } from './query.ts'
import { patchRow } from './patch.ts'
import type { WalletRecord } from '../models/records.ts'

export interface WalletStore {
  byId(id: string): Promise<WalletRecord | undefined>
  byAddress(address: string): Promise<WalletRecord | undefined>
  /** False when the username is taken (case-insensitively); the UNIQUE index decides, also under races. */
  update(id: string, patch: { username?: string | null; picture_url?: string | null }, now: number): Promise<boolean>
  /** Creates the wallet unless it exists; returns its id either way. */
  ensure(id: string, address: string, network: string, now: number): Promise<string>
}

/** A wallets row (with its totals) as the database returns it: money as text; counts and times as numbers or text. */
interface WalletRow extends Omit<WalletRecord, 'total_revenue'> {
  total_revenue: string
}

const toRecord = (row: WalletRow): WalletRecord => ({
  ...row,
  total_feeds: Number(row.total_feeds),
  total_entries: Number(row.total_entries),
  total_revenue: BigInt(row.total_revenue),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

// Totals are over active feeds, as listings show them.
const SELECT = q`SELECT w.id, w.address, w.network, w.username, w.picture_url, w.created_at, w.updated_at,
  (SELECT COUNT(*) FROM feeds f WHERE f.owner_id = w.id AND f.is_active = 1) AS total_feeds,
  (SELECT COALESCE(SUM(f.total_entries), 0) FROM feeds f WHERE f.owner_id = w.id AND f.is_active = 1) AS total_entries,
  (SELECT CAST(COALESCE(SUM(f.total_revenue), 0) AS TEXT) FROM feeds f WHERE f.owner_id = w.id) AS total_revenue
  FROM wallets w`

export function walletStore(sql: Sql): WalletStore {
  const one = async (query: ReturnType<typeof q>) => {
    const row = await sql.get<WalletRow>(query)
    return row ? toRecord(row) : undefined
  }
  return {
    byId: (id) => one(q`${SELECT} WHERE w.id = ${id}`),
    byAddress: (address) => one(q`${SELECT} WHERE w.address_lc = ${address.toLowerCase()}`),
    update(id, patch, now) {
      const values: Record<string, string | null> = { ...patch }
      if (patch.username !== undefined) values.username_lc = patch.username?.toLowerCase() ?? null
      return patchRow(sql, 'wallets', id, values, now)
    },
    async ensure(id, address, network, now) {
      const lc = address.toLowerCase()
      await sql.run(q`INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at)
        VALUES (${id}, ${address}, ${lc}, ${network}, ${now}, ${now})
        ON CONFLICT (address_lc) DO NOTHING`)
      return (await sql.get<{ id: string }>(q`SELECT id FROM wallets WHERE address_lc = ${lc}`))!.id
    },
  }
}
