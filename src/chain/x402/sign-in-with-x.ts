// x402's sign-in-with-x (SIWX): the challenge a 402 carries in extensions["sign-in-with-x"], and the check of a
// SIGN-IN-WITH-X proof, with @x402/extensions' own parse and message validation, and its signature verification
// (or the same text made by viem's SIWE writer, verified by the same verifier: siwxMessage says when and why). The origin
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
import { createSiweMessage } from 'viem/siwe'
import type { Address, Hex } from 'viem'
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
  networks: readonly NetworkInfo[],
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
    supportedChains: networks.map((network) => ({ chainId: caip2(network), type: 'eip191' as const })),
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
  d: { origin: URL; networks: readonly NetworkInfo[]; issued: (nonce: string) => boolean; verify: SignatureVerifier },
): Promise<SiwxProof> {
  let proof: ReturnType<typeof parseSIWxHeader>
  try {
    proof = parseSIWxHeader(header)
  } catch (error) {
    return { refused: `invalid_siwx_header: ${(error as Error).message}` }
  }
  const checked = await validateSIWxMessage(proof, d.origin, { maxAge: SIWX_LIFETIME_S * 1000, checkNonce: d.issued })
  if (!checked.isValid) return { refused: `${checked.invalidReason}: ${checked.invalidMessage}` }
  const chains = d.networks.map(caip2)
  if (!chains.includes(proof.chainId as NetworkInfo['caip2']))
    return { refused: `invalid_siwx_chain_id: this server signs in on ${chains.join(', ')} only` }
  const message = siwxMessage(proof)
  if (message !== null) {
    const valid = await d.verify(proof.address as Address, message, proof.signature as Hex).catch((error: Error) => error)
    if (valid instanceof Error) return { refused: `invalid_siwx_verifier_error: ${valid.message}` }
    if (!valid) return { refused: 'invalid_siwx_signature: Signature verification failed' }
    return { address: proof.address, nonce: proof.nonce }
  }
  try {
    const verified = await verifySIWxSignature(proof, {
      evmVerifier: ({ address, message, signature }) => d.verify(address, message, signature),
    })
    if (!verified.isValid) return { refused: `${verified.invalidReason}: ${verified.invalidMessage}` }
    return { address: verified.payer, nonce: proof.nonce }
  } catch (error) {
    // The SIWE library refuses a message its grammar does not parse by throwing.
    return { refused: `invalid_siwx_message: ${(error as Error).message.split('\n')[0]}` }
  }
}

const canonicalTime = (text: string | undefined) => text === undefined || new Date(text).toISOString() === text
/**
 * The EIP-4361 text of an EVM proof as viem writes it (its own field checks, regular expressions), when that text is
 * the one @x402/extensions' verifier signs (the SIWE library's toMessage): times in the form toISOString writes,
 * no empty statement, no request id. Null otherwise, and for fields viem refuses: the package's verifier decides.
 * The package's verifier also parses the text it made with the EIP-4361 grammar (an ABNF parser): 55 % of a
 * SIGN-IN-WITH-X read's CPU (docs/performance.md), for a text made here from fields validateSIWxMessage checked.
 */
export function siwxMessage(proof: ReturnType<typeof parseSIWxHeader>): string | null {
  const chainId = /^eip155:(\d+)$/.exec(proof.chainId)?.[1]
  if (!chainId || proof.statement === '' || proof.requestId !== undefined) return null
  if (!/^0x[0-9a-fA-F]{40}$/.test(proof.address) || !/^0x[0-9a-fA-F]*$/.test(proof.signature)) return null
  if (![proof.issuedAt, proof.expirationTime, proof.notBefore].every(canonicalTime)) return null
  try {
    return createSiweMessage({
      domain: proof.domain,
      address: proof.address as Address,
      statement: proof.statement,
      uri: proof.uri,
      version: proof.version as '1',
      chainId: Number(chainId),
      nonce: proof.nonce,
      issuedAt: new Date(proof.issuedAt),
      expirationTime: proof.expirationTime === undefined ? undefined : new Date(proof.expirationTime),
      notBefore: proof.notBefore === undefined ? undefined : new Date(proof.notBefore),
      resources: proof.resources,
    })
  } catch {
    return null
  }
}
