import { q, type Sql } from './query.ts'

/**
 * Browser sessions ended by sign-out before their token expires. The token itself stays valid to its signature, so
 * every instance asks this table (on the shared database, all of them see a sign-out at once); a row is kept until
 * the token's own expiry, then purged.
 */
export interface EndedSessionStore {
  end(id: string, expiresAt: number): Promise<void>
  isEnded(id: string): Promise<boolean>
  purgeExpiredBefore(cutoff: number): Promise<number>
}

export function endedSessionStore(sql: Sql): EndedSessionStore {
  return {
    async end(id, expiresAt) {
      await sql.run(q`INSERT INTO ended_sessions (id, expires_at) VALUES (${id}, ${expiresAt}) ON CONFLICT (id) DO NOTHING`)
    },
    isEnded: async (id) => (await sql.get(q`SELECT 1 AS ended FROM ended_sessions WHERE id = ${id}`)) !== undefined,
    purgeExpiredBefore: (cutoff) => sql.run(q`DELETE FROM ended_sessions WHERE expires_at < ${cutoff}`),
  }
}
