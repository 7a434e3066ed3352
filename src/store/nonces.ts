import type { Db } from './db.ts'

export interface NonceRow {
  nonce: string
  address_lc: string
  message: string
  expires_at: number
  used_at: number | null
}

/**
 * Runs a nonce write without its own fsync (synchronous = NORMAL for that commit). It is still ordered in the WAL
 * before everything after it, so the next durable commit (the entry or purchase the signature was for) makes it
 * durable too. A power cut can lose only a nonce issued but unused (the client asks again) or a spend that nothing
 * durable followed (a signed read could be replayed once, within the nonce's 5 minutes). It saves one fsync per
 * signed request and one per nonce.
 */
function withoutFsync<T>(db: Db, write: () => T): T {
  if (db.inTransaction) return write() // the enclosing transaction decides
  db.exec('PRAGMA synchronous = NORMAL')
  try {
    return write()
  } finally {
    db.exec('PRAGMA synchronous = FULL')
  }
}

export function nonceStore(db: Db) {
  const insert = db.query('INSERT INTO nonces (nonce, address_lc, message, expires_at) VALUES (?, ?, ?, ?)')
  const find = db.query<NonceRow, [string]>('SELECT * FROM nonces WHERE nonce = ?')
  // The conditional UPDATE is the atomic claim: of two requests with one signature, only one changes a row.
  const consume = db.query('UPDATE nonces SET used_at = ? WHERE nonce = ? AND address_lc = ? AND used_at IS NULL AND expires_at > ?')
  const purge = db.query('DELETE FROM nonces WHERE expires_at < ?')
  return {
    insert: (row: Omit<NonceRow, 'used_at'>) => withoutFsync(db, () => insert.run(row.nonce, row.address_lc, row.message, row.expires_at)),
    find: (nonce: string) => find.get(nonce),
    consume: (nonce: string, addressLc: string, now: number): boolean => withoutFsync(db, () => consume.run(now, nonce, addressLc, now).changes === 1),
    purgeExpiredBefore: (cutoff: number) => purge.run(cutoff).changes,
  }
}
export type NonceStore = ReturnType<typeof nonceStore>
