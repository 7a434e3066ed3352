// A person's sign-in in a browser: after one signed sign-in, a session token (an HS256 JWT with the server key, in
// an HttpOnly cookie) stands for the wallet on reads only — an entry and its bytes, for its owner or a past buyer —
// so pages, <img> and <video> can show what the wallet may read. Every write still needs its own signature, except
// from the studio's pages with a studio session (studio-sessions.ts): a token of its own scope, which a reading
// session's token never passes for, nor the reverse. Each token has an id, so that sign-out can end it before it
// expires (auth.ts keeps the ended ones in the records).
import { randomUUID } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import { nowSeconds } from '../lib/clock.ts'

export const SESSION_TTL_S = 86_400
export const SESSION_COOKIE = 'trellis_session'
/** A studio session lives at most 12 hours. */
export const STUDIO_TTL_S = 43_200
export const STUDIO_COOKIE = 'trellis_studio'
/** Names the signed-in wallet for the pages' script; it grants nothing. */
export const WALLET_COOKIE = 'trellis_wallet'

export interface Session {
  id: string
  address: `0x${string}`
  expiresAt: number
}

/** What a token is for, its claim `knd`: reading (the pages' session) or the studio's writes. */
export type SessionScope = 'session' | 'studio'
const TTL_S: Record<SessionScope, number> = { session: SESSION_TTL_S, studio: STUDIO_TTL_S }

export function sessionTokens(key: Uint8Array, scope: SessionScope = 'session') {
  const ttlS = TTL_S[scope]
  return {
    /** The longest a token of this scope lives. */
    ttlS,
    async sign(address: `0x${string}`): Promise<Session & { token: string }> {
      const expiresAt = nowSeconds() + ttlS
      const id = randomUUID()
      const token = await new SignJWT({ knd: scope, sub: address })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setJti(id)
        .setIssuedAt(nowSeconds())
        .setExpirationTime(expiresAt)
        .sign(key)
      return { token, id, address, expiresAt }
    },
    /** The session a token stands for; null when it is not one of ours, of this scope, or has expired (ended ones: auth.ts). */
    async verify(token: string): Promise<Session | null> {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(nowSeconds() * 1000) })
        if (
          payload.knd !== scope ||
          typeof payload.sub !== 'string' ||
          !/^0x[0-9a-fA-F]{40}$/.test(payload.sub) ||
          typeof payload.exp !== 'number'
        )
          return null
        // A token without an id could not be ended by sign-out: not one this server stands for.
        if (typeof payload.jti !== 'string' || payload.jti === '') return null
        return { id: payload.jti, address: payload.sub as `0x${string}`, expiresAt: payload.exp }
      } catch {
        return null
      }
    },
  }
}
export type SessionTokens = ReturnType<typeof sessionTokens>
