import type { Db } from './db.ts'

export interface NonceRow {
  nonce: string
  address_lc: string
  message: string
  expires_at: number
  used_at: number | null
}

export function nonceStore(db: Db) {
  const insert = db.query('INSERT INTO nonces (nonce, address_lc, message, expires_at) VALUES (?, ?, ?, ?)')
  const find = db.query<NonceRow, [string]>('SELECT * FROM nonces WHERE nonce = ?')
  // The conditional UPDATE is the atomic claim: of two requests with one signature, only one changes a row.
  const consume = db.query('UPDATE nonces SET used_at = ? WHERE nonce = ? AND address_lc = ? AND used_at IS NULL AND expires_at > ?')
  const purge = db.query('DELETE FROM nonces WHERE expires_at < ?')
  return {
    insert: (row: Omit<NonceRow, 'used_at'>) => insert.run(row.nonce, row.address_lc, row.message, row.expires_at),
    find: (nonce: string) => find.get(nonce),
    consume: (nonce: string, addressLc: string, now: number): boolean => consume.run(now, nonce, addressLc, now).changes === 1,
    purgeExpiredBefore: (cutoff: number) => purge.run(cutoff).changes,
  }
}
export type NonceStore = ReturnType<typeof nonceStore>
