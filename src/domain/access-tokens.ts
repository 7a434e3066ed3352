// Signed entry-access tokens (HS256 JWTs with the server key). A receipt token is the one-hour content_url given
// to whoever may read an entry; it is not counted and not listed (access links are).
import { SignJWT, jwtVerify, errors } from 'jose'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

export const RECEIPT_TTL_S = 3600

export interface AccessClaims {
  kind: 'receipt' | 'link'
  entryId: string
  feedId: string
  linkId?: string
  exp: number
}

export function accessTokens(key: Uint8Array) {
  return {
    async sign(claims: AccessClaims): Promise<string> {
      const jwt = new SignJWT({
        knd: claims.kind,
        eid: claims.entryId,
        fid: claims.feedId,
        ...(claims.linkId ? { lid: claims.linkId } : {}),
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(nowSeconds())
        .setExpirationTime(claims.exp)
      return jwt.sign(key)
    },
    async verify(token: string): Promise<AccessClaims> {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(nowSeconds() * 1000) })
        const { knd, eid, fid, lid, exp } = payload as Record<string, unknown>
        if ((knd !== 'receipt' && knd !== 'link') || typeof eid !== 'string' || typeof fid !== 'string' || typeof exp !== 'number') {
          return fail('INVALID_ACCESS_TOKEN', 'access token is invalid')
        }
        return { kind: knd, entryId: eid, feedId: fid, linkId: typeof lid === 'string' ? lid : undefined, exp }
      } catch (error) {
        if (error instanceof errors.JWTExpired) return fail('ACCESS_LINK_EXPIRED', 'access link has expired')
        if (error instanceof Error && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_J')) {
          return fail('INVALID_ACCESS_TOKEN', 'access token is invalid')
        }
        throw error
      }
    },
  }
}
export type AccessTokens = ReturnType<typeof accessTokens>
