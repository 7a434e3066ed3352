// x402 on the wire, as documented to clients (src/chain/x402 builds and reads these).
import { Type as t } from '@sinclair/typebox'

export const PaymentRequirement = t.Object(
  {
    scheme: t.Literal('exact'),
    network: t.String({ description: 'base or base-sepolia' }),
    maxAmountRequired: t.String({ pattern: '^[0-9]+$', description: 'the price in the smallest unit' }),
    resource: t.String({ description: 'the absolute URL being paid for' }),
    description: t.String(),
    mimeType: t.String(),
    payTo: t.String({ description: "the feed owner's address" }),
    maxTimeoutSeconds: t.Integer(),
    asset: t.String({ description: 'the USDC contract' }),
    extra: t.Object({ name: t.String({ description: "the token's EIP-712 name" }), version: t.String() }),
  },
  { description: 'An x402 v1 payment requirement' },
)

export const PaymentRequired = t.Object(
  {
    x402Version: t.Literal(1),
    error: t.String({ description: '"X-PAYMENT header is required", or why the payment sent was refused (an x402 reason code)' }),
    accepts: t.Array(PaymentRequirement),
  },
  { description: 'Payment required (x402 v1). Pay by repeating the request with an X-PAYMENT header (v1) or PAYMENT-SIGNATURE (v2)' },
)

/** Headers of a 402 answer. */
export const PaymentRequiredHeaders = {
  'payment-required': t.String({ description: 'the same requirement as an x402 v2 challenge: base64 JSON' }),
  'x-payment-response': t.Optional(t.String({ description: 'why a v1 payment was refused: base64 JSON settlement result' })),
  'payment-response': t.Optional(t.String({ description: 'the same for a v2 payment' })),
}
/** Headers of an answer that a payment in the request paid for. */
export const PaidHeaders = {
  'x-payment-response': t.Optional(
    t.String({ description: 'the settlement of a v1 payment: base64 JSON {success, transaction, network, payer}' }),
  ),
  'payment-response': t.Optional(t.String({ description: 'the same for a v2 payment' })),
}
