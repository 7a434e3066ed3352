// Sign-in-with-x for everyone who may read a paid entry: its owner and its buyers (later, a pass's holders). A 402
// offers a fresh nonce; a SIGN-IN-WITH-X proof made from it, by a wallet with the right, reads with no payment.
//
// Issuing writes nothing: a nonce (32 hex characters, as the spec has them) is this process's random prefix and a
// count, the second it was issued, and a MAC of those under the server key, so any instance on the database knows
// one of its own, no two challenges share one, and a flood of 402s stores nothing. Spending one is a row
// (siwx_spent), unique across instances: a proof is good once.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { NetworkInfo } from '../config.ts'
import type { Records } from '../store/stores.ts'
import type { SignatureVerifier } from '../chain/signatures.ts'
import { checkSiwxProof, siwxExtensions, siwxTimes, SIWX_LIFETIME_S } from '../chain/x402/sign-in-with-x.ts'
import { nowSeconds } from '../lib/clock.ts'

const UNIQUE_HEX = 12 // 6 random hex per process, then a count
const TIME_HEX = 8
const MAC_HEX = 12
const LAZILY = { durability: 'lazy', unkept: true } as const

export type SiwxCheck = { address: string } | { refused: string }

export function signInWithX(d: {
  records: Records
  secret: Uint8Array
  networks: readonly NetworkInfo[]
  publicUrl: () => string
  verify: SignatureVerifier
}) {
  const key = createHmac('sha256', d.secret).update('trellis sign-in-with-x nonces').digest()
  const mac = (body: string) => new Bun.CryptoHasher('sha256', key).update(body).digest('hex').slice(0, MAC_HEX)
  const prefix = randomBytes(3).toString('hex')
  let count = 0

  function mint(at: number): string {
    count = (count + 1) % 0x1000000
    const body = prefix + count.toString(16).padStart(6, '0') + at.toString(16).padStart(TIME_HEX, '0')
    return body + mac(body)
  }

  /** When a nonce of ours was issued (seconds), or null when it is not one of ours. */
  function issuedAt(nonce: string): number | null {
    if (!/^[0-9a-f]+$/.test(nonce) || nonce.length !== UNIQUE_HEX + TIME_HEX + MAC_HEX) return null
    const body = nonce.slice(0, UNIQUE_HEX + TIME_HEX)
    const given = Buffer.from(nonce.slice(UNIQUE_HEX + TIME_HEX), 'hex')
    if (!timingSafeEqual(given, Buffer.from(mac(body), 'hex'))) return null
    return Number.parseInt(body.slice(UNIQUE_HEX), 16)
  }
  const unexpired = (nonce: string, now = nowSeconds()) => {
    const at = issuedAt(nonce)
    return at !== null && at <= now + 1 && now < at + SIWX_LIFETIME_S
  }

  return {
    /** A nonce of our own, and when it was issued (seconds): for a challenge made once and filled in per answer. */
    fresh(): { nonce: string; issuedAt: number } {
      const at = nowSeconds()
      return { nonce: mint(at), issuedAt: at }
    },

    /** The extensions of a 402 for `resource`: a challenge with a nonce of its own. */
    challenge(resource: string) {
      const at = nowSeconds()
      return siwxExtensions(new URL(d.publicUrl()), d.networks, resource, { nonce: mint(at), ...siwxTimes(at) })
    },

    /** The wallet a SIGN-IN-WITH-X header proves, its nonce spent; or why it proves none. */
    async check(header: string): Promise<SiwxCheck> {
      const proof = await checkSiwxProof(header, {
        origin: new URL(d.publicUrl()),
        networks: d.networks,
        issued: (nonce) => unexpired(nonce),
        verify: d.verify,
      })
      if ('refused' in proof) return proof
      const expiresAt = issuedAt(proof.nonce)! + SIWX_LIFETIME_S
      const spent = await d.records.single((tx) => tx.nonces.spendProof(proof.nonce, expiresAt), LAZILY)
      return spent ? { address: proof.address } : { refused: 'invalid_siwx_nonce: this proof was used before; sign the new challenge' }
    },
  }
}
export type SignInWithX = ReturnType<typeof signInWithX>
