// x402's sign-in-with-x (SIWX): the challenge a 402 carries in extensions["sign-in-with-x"], and the check of a
// SIGN-IN-WITH-X proof, with @x402/extensions' own parse, message validation and signature verification. The origin
// is the configured public URL's, never the request's Host. Which nonces were issued and which are spent is the
// caller's (domain/sign-in-with-x.ts); whether the address may read is the domain's too.
import {
  buildSIWxSchema,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature,
  type SIWxExtension,
} from '@x402/extensions/sign-in-with-x'
import type { NetworkInfo } from '../../config.ts'
import type { SignatureVerifier } from '../signatures.ts'
import { caip2 } from './networks.ts'

/** The request header that carries a proof. */
export const SIWX_HEADER = SIGN_IN_WITH_X
/** How long a challenge may be signed and used after it was issued: the package's default maximum age. */
export const SIWX_LIFETIME_S = 300
const STATEMENT = 'Sign in with the wallet that paid, to read again without paying'

let timesOf = { at: -1, issuedAt: '', expirationTime: '' }
/** A challenge's times as the spec writes them (ISO 8601), from when it was issued (seconds): made once a second. */
export function siwxTimes(issuedAt: number): { issuedAt: string; expirationTime: string } {
  if (timesOf.at !== issuedAt)
    timesOf = {
      at: issuedAt,
      issuedAt: new Date(issuedAt * 1000).toISOString(),
      expirationTime: new Date((issuedAt + SIWX_LIFETIME_S) * 1000).toISOString(),
    }
  return timesOf
}

/** The extensions of a 402 that offers sign-in-with-x for `resource`: its nonce and times, as given. */
export function siwxExtensions(
  origin: URL,
  network: NetworkInfo,
  resource: string,
  fresh: { nonce: string; issuedAt: string; expirationTime: string },
) {
  const extension: SIWxExtension = {
    info: {
      domain: origin.host,
      uri: resource,
      statement: STATEMENT,
      version: '1',
      ...fresh,
      resources: [resource],
    },
    supportedChains: [{ chainId: caip2(network), type: 'eip191' }],
    schema: buildSIWxSchema(),
  }
  return { [SIGN_IN_WITH_X]: extension }
}

export type SiwxProof = { address: string; nonce: string } | { refused: string }

/**
 * The address a SIGN-IN-WITH-X header proves, or why it proves none (an x402 reason). `issued`: whether we issued
 * this nonce and it is still unexpired (spending it is the caller's, once the proof holds).
 */
export async function checkSiwxProof(
  header: string,
  d: { origin: URL; network: NetworkInfo; issued: (nonce: string) => boolean; verify: SignatureVerifier },
): Promise<SiwxProof> {
  let proof: ReturnType<typeof parseSIWxHeader>
  try {
    proof = parseSIWxHeader(header)
  } catch (error) {
    return { refused: `invalid_siwx_header: ${(error as Error).message}` }
  }
  const checked = await validateSIWxMessage(proof, d.origin, { maxAge: SIWX_LIFETIME_S * 1000, checkNonce: d.issued })
  if (!checked.isValid) return { refused: `${checked.invalidReason}: ${checked.invalidMessage}` }
  if (proof.chainId !== caip2(d.network)) return { refused: `invalid_siwx_chain_id: this server signs in on ${caip2(d.network)} only` }
  const verified = await verifySIWxSignature(proof, {
    evmVerifier: ({ address, message, signature }) => d.verify(address, message, signature),
  })
  if (!verified.isValid) return { refused: `${verified.invalidReason}: ${verified.invalidMessage}` }
  return { address: verified.payer, nonce: proof.nonce }
}
