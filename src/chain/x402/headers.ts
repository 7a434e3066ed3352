// The x402 HTTP headers: names, and their codecs from @x402/core (base64 JSON).
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http'
import type { PaymentRequired, SettleResponse } from '@x402/core/types'

/** The headers that carry a payment: X-PAYMENT (v1), PAYMENT-SIGNATURE (v2). */
export const PAYMENT_HEADERS = ['x-payment', 'payment-signature'] as const

/** The payment a request carries, if any. */
export const paymentHeaderOf = (headers: Headers): string | null => headers.get(PAYMENT_HEADERS[0]) ?? headers.get(PAYMENT_HEADERS[1])

/** The 402's v2 challenge header. */
export const PAYMENT_REQUIRED = 'payment-required'

/** Where a settlement's result goes: X-PAYMENT-RESPONSE for a v1 payment, PAYMENT-RESPONSE for v2. */
export const settlementHeaderName = (version: 1 | 2) => (version === 2 ? 'payment-response' : 'x-payment-response')

export type Settlement = SettleResponse

export const encodeSettlement = (settlement: Settlement): string => encodePaymentResponseHeader(settlement)

export const encodeChallenge = (challenge: PaymentRequired): string => encodePaymentRequiredHeader(challenge)
