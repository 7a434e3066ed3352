// Credentials on every facilitator call, in the shape @x402/core's HTTPFacilitatorClient asks `createAuthHeaders` for
// (headers per path: verify, settle, supported). Two kinds:
// - a static bearer token (`Authorization: Bearer <token>`), what most hosted facilitators hand out;
// - a Coinbase Developer Platform (CDP) API key pair: the key's id and secret sign a JWT for each call, valid two
//   minutes and bound to that one request ("POST api.cdp.coinbase.com/platform/v2/x402/settle"), as CDP's own SDK
//   does (claims iss "cdp", sub = key id, uris; header kid = key id and a random nonce; ES256 or EdDSA).
import { SignJWT, base64url } from 'jose'
import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto'
import type { FacilitatorAuth } from '../config.ts'

export type FacilitatorPath = 'verify' | 'settle' | 'supported'
export type AuthHeaders = () => Promise<Record<FacilitatorPath, Record<string, string>>>

const METHODS: Record<FacilitatorPath, string> = { verify: 'POST', settle: 'POST', supported: 'GET' }
const JWT_LIFETIME_S = 120

export class FacilitatorKeyError extends Error {}

/**
 * A CDP API key secret as the signing key: a PEM EC P-256 key (PKCS#8 or SEC1, as CDP's key file holds it, with
 * `\n` escapes when pasted from that JSON) or a base64 Ed25519 key (64 bytes: seed, then public key).
 */
export function cdpSigningKey(secret: string): { key: KeyObject; alg: 'ES256' | 'EdDSA' } {
  const text = secret.trim()
  if (text.includes('-----BEGIN')) {
    let key: KeyObject
    try {
      key = createPrivateKey(text.replace(/\\n/g, '\n'))
    } catch {
      throw new FacilitatorKeyError('TRELLIS_CDP_API_KEY_SECRET is not a readable PEM private key')
    }
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new FacilitatorKeyError('TRELLIS_CDP_API_KEY_SECRET must be an EC P-256 (ES256) or Ed25519 key')
    }
    return { key, alg: 'ES256' }
  }
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0)
  if (bytes.length !== 64)
    throw new FacilitatorKeyError('TRELLIS_CDP_API_KEY_SECRET is neither a PEM EC key nor a base64 Ed25519 key (64 bytes)')
  try {
    const key = createPrivateKey({
      key: { kty: 'OKP', crv: 'Ed25519', d: base64url.encode(bytes.subarray(0, 32)), x: base64url.encode(bytes.subarray(32)) },
      format: 'jwk',
    })
    return { key, alg: 'EdDSA' }
  } catch {
    throw new FacilitatorKeyError('TRELLIS_CDP_API_KEY_SECRET is not a valid Ed25519 key')
  }
}

/** The headers for each facilitator call, or undefined when the facilitator takes no credentials. */
export function facilitatorAuthHeaders(auth: FacilitatorAuth, facilitatorUrl: string): AuthHeaders | undefined {
  if (auth.kind === 'none') return undefined
  if (auth.kind === 'bearer') {
    const headers = { Authorization: `Bearer ${auth.token}` }
    return async () => ({ verify: headers, settle: headers, supported: headers })
  }
  const { key, alg } = cdpSigningKey(auth.keySecret)
  const base = new URL(facilitatorUrl)
  const prefix = base.pathname.replace(/\/+$/, '')
  const sign = async (path: FacilitatorPath) => {
    const now = Math.floor(Date.now() / 1000)
    const jwt = await new SignJWT({ iss: 'cdp', sub: auth.keyId, uris: [`${METHODS[path]} ${base.host}${prefix}/${path}`] })
      .setProtectedHeader({ alg, kid: auth.keyId, typ: 'JWT', nonce: randomBytes(16).toString('hex') })
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + JWT_LIFETIME_S)
      .sign(key)
    return { Authorization: `Bearer ${jwt}` }
  }
  return async () => {
    const [verify, settle, supported] = await Promise.all([sign('verify'), sign('settle'), sign('supported')])
    return { verify, settle, supported }
  }
}
