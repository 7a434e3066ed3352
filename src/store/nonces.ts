import { q, type Sql } from './query.ts'

export interface NonceRow {
  nonce: string
  address_lc: string
  message: string
  expires_at: number
  used_at: number | null
}

/**
 * Each method is one statement (Records.single), meant for lazy durability. Embedded, lazy commits are still ordered
 * before everything after them, so the next durable commit (the entry or purchase the signature was for) makes them
 * durable too: a power cut can lose only a nonce issued but unused (the client asks again) or a spend that nothing
 * durable followed (a signed read could be replayed once, within the nonce's 5 minutes). On PostgreSQL the table is
 * UNLOGGED: no write to it waits for a WAL flush, and a crash empties it, which can only refuse signatures (every
 * client asks for a new nonce), never let one be used twice.
 */
export interface NonceStore {
  insert(row: Omit<NonceRow, 'used_at'>): Promise<void>
  find(nonce: string): Promise<NonceRow | undefined>
  /**
   * The atomic claim: true when the nonce was issued as `claim` says (for that address, as that message, with that
   * expiry), is unused and unexpired at `now`; it is then used. Of two requests with one signature, only one gets true.
   */
  consume(claim: NonceClaim, now: number): Promise<boolean>
  /**
   * A sign-in-with-x proof's nonce (minted without a row: domain/sign-in-with-x.ts) spent: true the first time only,
   * across every instance on the database. Kept in siwx_spent (logged, unlike nonces) until it expires.
   */
  spendProof(nonce: string, expiresAt: number): Promise<boolean>
  purgeExpiredBefore(cutoff: number): Promise<number>
}

export interface NonceClaim {
  nonce: string
  addressLc: string
  message: string
  expiresAt: number
}

export function nonceStore(sql: Sql): NonceStore {
  return {
    async insert(row) {
      await sql.run(
        q`INSERT INTO nonces (nonce, address_lc, message, expires_at)
          VALUES (${row.nonce}, ${row.address_lc}, ${row.message}, ${row.expires_at})`,
      )
    },
    async find(nonce) {
      const row = await sql.get<NonceRow>(q`SELECT nonce, address_lc, message, expires_at, used_at FROM nonces WHERE nonce = ${nonce}`)
      return row && { ...row, expires_at: Number(row.expires_at), used_at: row.used_at === null ? null : Number(row.used_at) }
    },
    consume: async ({ nonce, addressLc, message, expiresAt }, now) =>
      (await sql.run(q`UPDATE nonces SET used_at = ${now} WHERE nonce = ${nonce} AND address_lc = ${addressLc} AND message = ${message}
        AND expires_at = ${expiresAt} AND used_at IS NULL AND expires_at > ${now}`)) === 1,
    spendProof: async (nonce, expiresAt) =>
      (await sql.run(q`INSERT INTO siwx_spent (nonce, expires_at) VALUES (${nonce}, ${expiresAt}) ON CONFLICT DO NOTHING`)) === 1,
    purgeExpiredBefore: async (cutoff) =>
      (await sql.run(q`DELETE FROM nonces WHERE expires_at < ${cutoff}`)) +
      (await sql.run(q`DELETE FROM siwx_spent WHERE expires_at < ${cutoff}`)),
  }
}
