// A person's sign-in in a browser: after one signed sign-in, a session token (an HS256 JWT with the server key, in
// an HttpOnly cookie) stands for the wallet on reads only — an entry and its bytes, for its owner or a past buyer —
// so pages, <img> and <video> can show what the wallet may read. Every write still needs its own signature. Each
// token has an id, so that sign-out can end it before it expires (auth.ts keeps the ended ones in the records).
import { randomUUID } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import { nowSeconds } from '../lib/clock.ts'

export const SESSION_TTL_S = 86_400
export const SESSION_COOKIE = 'trellis_session'
/** Names the signed-in wallet for the pages' script; it grants nothing. */
export const WALLET_COOKIE = 'trellis_wallet'

export interface Session {
  id: string
  address: `0x${string}`
  expiresAt: number
}

export function sessionTokens(key: Uint8Array) {
  return {
    async sign(address: `0x${string}`): Promise<Session & { token: string }> {
      const expiresAt = nowSeconds() + SESSION_TTL_S
      const id = randomUUID()
      const token = await new SignJWT({ knd: 'session', sub: address })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setJti(id)
        .setIssuedAt(nowSeconds())
        .setExpirationTime(expiresAt)
        .sign(key)
      return { token, id, address, expiresAt }
    },
    /** The session a token stands for; null when it is not one of ours, or has expired (ended ones: auth.ts). */
    async verify(token: string): Promise<Session | null> {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(nowSeconds() * 1000) })
        if (
          payload.knd !== 'session' ||
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
