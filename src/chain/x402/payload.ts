// An x402 'exact' EVM payment as it arrives (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2), decoded and checked
// against what the entry costs, before anything is sent to the facilitator or the chain. The requirements are
// rebuilt from the price tag: nothing in the payload is trusted as a requirement.
import type { NetworkInfo } from '../../config.ts'
import { isWalletAddress } from '../signatures.ts'
import { wallClockSeconds } from '../../lib/clock.ts'
import { MAX_TIMEOUT_SECONDS, v1Requirement, v2Requirement, type PriceTag } from './requirements.ts'
import { networkOnWire, type WireVersion } from './networks.ts'
import { REASONS, tooFarAhead, valueIsNotPrice } from './reasons.ts'

export interface Authorization {
  from: string
  to: string
  value: string
  validAfter: string
  validBefore: string
  nonce: string
}

/**
 * A payment, as the domain handles it: the transfer its payer signed. `wire` is how it was sent, read only inside
 * chain/x402 (the settler is sent it, the payments table keeps it, the receipt answers in its version).
 */
export interface Payment {
  authorization: Authorization
  wire: { version: WireVersion; json: Record<string, unknown> }
}

/** What a payment header held: a payment, or why it is none (an x402 reason code). */
export type PaymentOrRefusal = Payment | { refused: string }

const DIGITS = /^\d{1,78}$/
// validBefore must leave the settlement time to land (the facilitator wants ≥ 6 s)...
const MIN_VALIDITY_LEFT_S = 6
// ...and may not reach further than the challenge allows (plus clock skew): a long-lived authorization is a
// long-lived bearer token.
export const MAX_VALIDITY_AHEAD_S = MAX_TIMEOUT_SECONDS + 60

/** The payment header's payload, or why it is not one. */
export function decodePayment(header: string): PaymentOrRefusal {
  let json: Record<string, unknown>
  try {
    json = JSON.parse(Buffer.from(header, 'base64').toString('utf8'))
  } catch {
    return { refused: REASONS.notBase64Json }
  }
  if (!json || typeof json !== 'object') return { refused: REASONS.invalidPayload }
  const version = json.x402Version
  if (version !== 1 && version !== 2) return { refused: REASONS.invalidVersion }
  const payload = json.payload as { authorization?: Record<string, unknown>; signature?: unknown } | undefined
  const a = payload?.authorization
  if (!a || typeof payload?.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(payload.signature))
    return { refused: REASONS.missingAuthorization }
  const fields = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const
  if (fields.some((f) => typeof a[f] !== 'string')) return { refused: REASONS.fieldsNotStrings }
  const auth = a as unknown as Authorization
  if (!isWalletAddress(auth.from) || !isWalletAddress(auth.to)) return { refused: REASONS.badAddress }
  if (!DIGITS.test(auth.value) || !DIGITS.test(auth.validAfter) || !DIGITS.test(auth.validBefore)) return { refused: REASONS.badNumber }
  if (!/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return { refused: REASONS.badNonce }
  return { authorization: auth, wire: { version, json } }
}

/**
 * The requirements this payment must meet, or the reason it cannot pay `tag`: the cheap, deterministic refusals
 * (scheme, network, recipient, amount, validity window), before any call out.
 */
export function requirementsFor<N extends NetworkInfo>(
  payment: Payment,
  networks: readonly N[],
  tag: PriceTag,
): { requirements: unknown; network: N } | { refused: string } {
  const { authorization: auth, wire } = payment
  // v1 names the scheme and network at the top; v2 in the requirement it says it accepted.
  const chosen = (wire.version === 1 ? wire.json : wire.json.accepted) as { scheme?: unknown; network?: unknown } | undefined
  if (chosen?.scheme !== 'exact') return { refused: REASONS.scheme }
  const network = networks.find((one) => chosen.network === networkOnWire(one, wire.version))
  if (!network) return { refused: REASONS.network }
  const requirements = wire.version === 1 ? v1Requirement(network, tag) : v2Requirement(network, tag)
  if (auth.to.toLowerCase() !== tag.payTo.toLowerCase()) return { refused: REASONS.recipient }
  if (BigInt(auth.value) !== BigInt(tag.amount)) return { refused: valueIsNotPrice(tag.amount) }
  const now = wallClockSeconds()
  if (BigInt(auth.validBefore) < BigInt(now + MIN_VALIDITY_LEFT_S)) return { refused: REASONS.expiresTooSoon }
  if (BigInt(auth.validAfter) > BigInt(now)) return { refused: REASONS.notYetValid }
  if (BigInt(auth.validBefore) > BigInt(now + MAX_VALIDITY_AHEAD_S)) return { refused: tooFarAhead(MAX_VALIDITY_AHEAD_S) }
  return { requirements, network }
}

/** What the payments table keeps of a payment sent for settlement: its wire version and payload, and what it was held to. */
export const paymentRecord = (payment: Payment, requirements: unknown) => ({
  x402_version: payment.wire.version,
  payload: JSON.stringify(payment.wire.json),
  requirements: JSON.stringify(requirements),
})
