import { q, type Sql } from './query.ts'

/**
 * Browser sessions ended by sign-out before their token expires. The token itself stays valid to its signature, so
 * every instance asks this table (on the shared database, all of them see a sign-out at once); a row is kept until
 * the token's own expiry, then purged.
 */
export interface EndedSessionStore {
  end(id: string, expiresAt: number): Promise<void>
  isEnded(id: string): Promise<boolean>
  /** Those whose tokens have not expired by `now`: what an instance must know of at start. */
  standing(now: number): Promise<Array<{ id: string; expires_at: number }>>
  purgeExpiredBefore(cutoff: number): Promise<number>
}

export function endedSessionStore(sql: Sql): EndedSessionStore {
  return {
    async end(id, expiresAt) {
      await sql.run(q`INSERT INTO ended_sessions (id, expires_at) VALUES (${id}, ${expiresAt}) ON CONFLICT (id) DO NOTHING`)
    },
    isEnded: async (id) => (await sql.get(q`SELECT 1 AS ended FROM ended_sessions WHERE id = ${id}`)) !== undefined,
    standing: async (now) =>
      (await sql.all<{ id: string; expires_at: number }>(q`SELECT id, expires_at FROM ended_sessions WHERE expires_at > ${now}`)).map(
        (row) => ({ id: row.id, expires_at: Number(row.expires_at) }),
      ),
    purgeExpiredBefore: (cutoff) => sql.run(q`DELETE FROM ended_sessions WHERE expires_at < ${cutoff}`),
  }
}
