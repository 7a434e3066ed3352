// An x402 'exact' EVM payment as it arrives (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2), decoded and checked
// against what the entry costs, before anything is sent to the facilitator or the chain. The requirements are
// rebuilt from the price tag: nothing in the payload is trusted as a requirement.
import type { NetworkInfo } from '../../config.ts'
import { isWalletAddress } from '../signatures.ts'
import { wallClockSeconds } from '../../lib/clock.ts'
import { MAX_TIMEOUT_SECONDS, v1Requirement, v2Challenge, type PriceTag } from './requirements.ts'
import { REASONS, tooFarAhead } from './reasons.ts'

export interface Authorization { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string }
export interface DecodedPayment { version: 1 | 2; raw: Record<string, unknown>; authorization: Authorization; signature: string }

const DIGITS = /^\d{1,78}$/
// validBefore must leave the settlement time to land (the facilitator wants ≥ 6 s)...
const MIN_VALIDITY_LEFT_S = 6
// ...and may not reach further than the challenge allows (plus clock skew): a long-lived authorization is a
// long-lived bearer token.
export const MAX_VALIDITY_AHEAD_S = MAX_TIMEOUT_SECONDS + 60

/** The payment header's payload, or why it is not one. */
export function decodePayment(header: string): DecodedPayment | string {
  let json: Record<string, unknown>
  try {
    json = JSON.parse(Buffer.from(header, 'base64').toString('utf8'))
  } catch {
    return REASONS.notBase64Json
  }
  if (!json || typeof json !== 'object') return REASONS.invalidPayload
  const version = json.x402Version
  if (version !== 1 && version !== 2) return REASONS.invalidVersion
  const payload = json.payload as { authorization?: Record<string, unknown>; signature?: unknown } | undefined
  const a = payload?.authorization
  if (!a || typeof payload?.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(payload.signature)) return REASONS.missingAuthorization
  const fields = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const
  if (fields.some((f) => typeof a[f] !== 'string')) return REASONS.fieldsNotStrings
  const auth = a as unknown as Authorization
  if (!isWalletAddress(auth.from) || !isWalletAddress(auth.to)) return REASONS.badAddress
  if (!DIGITS.test(auth.value) || !DIGITS.test(auth.validAfter) || !DIGITS.test(auth.validBefore)) return REASONS.badNumber
  if (!/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return REASONS.badNonce
  return { version, raw: json, authorization: auth, signature: payload.signature }
}

/**
 * The requirements this payment must meet, or the reason it cannot pay `tag`: the cheap, deterministic refusals
 * (scheme, network, recipient, amount, validity window), before any call out.
 */
export function requirementsFor(payment: DecodedPayment, network: NetworkInfo, tag: PriceTag): { requirements: unknown } | { refused: string } {
  const { version, authorization: auth, raw } = payment
  let requirements: unknown
  if (version === 1) {
    if (raw.scheme !== 'exact') return { refused: REASONS.scheme }
    if (raw.network !== network.name) return { refused: REASONS.network }
    requirements = v1Requirement(network, tag)
  } else {
    const accepted = raw.accepted as { scheme?: unknown; network?: unknown } | undefined
    if (accepted?.scheme !== 'exact') return { refused: REASONS.scheme }
    if (accepted.network !== `eip155:${network.chainId}`) return { refused: REASONS.network }
    requirements = v2Challenge(network, tag, '').accepts[0]
  }
  if (auth.to.toLowerCase() !== tag.payTo.toLowerCase()) return { refused: REASONS.recipient }
  if (BigInt(auth.value) !== BigInt(tag.amount)) return { refused: REASONS.value }
  const now = wallClockSeconds()
  if (BigInt(auth.validBefore) < BigInt(now + MIN_VALIDITY_LEFT_S)) return { refused: REASONS.expiresTooSoon }
  if (BigInt(auth.validAfter) > BigInt(now)) return { refused: REASONS.notYetValid }
  if (BigInt(auth.validBefore) > BigInt(now + MAX_VALIDITY_AHEAD_S)) return { refused: tooFarAhead(MAX_VALIDITY_AHEAD_S) }
  return { requirements }
}
