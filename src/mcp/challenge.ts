// A paid entry's x402 challenge (its 402 answer) as the official client reads it, and what it asks for: the price
// tools show it, the purchase checks its amount against the caps.
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { usdcDecimal } from '../lib/money.ts'

/** The amount a requirement asks for (v2 `amount`, v1 `maxAmountRequired`), or null when it is not whole digits. */
export function amountOf(requirement: PaymentRequirements | Record<string, unknown>): bigint | null {
  const raw = (requirement as { amount?: unknown }).amount ?? (requirement as { maxAmountRequired?: unknown }).maxAmountRequired
  return typeof raw === 'string' && /^\d{1,78}$/.test(raw) ? BigInt(raw) : null
}

export type Challenge = Awaited<ReturnType<typeof challengeOf>>

/** The x402 challenge of a 402 answer, as the official client reads it (the v2 header first, else the v1 body). */
export async function challengeOf(response: Response) {
  const body = await response.json().catch(() => undefined)
  return new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((name) => response.headers.get(name), body)
}

/** The x402 challenge of a 402, summed up: the first requirement's terms, and every requirement as the server sent it. */
export function priceTerms(challenge: Challenge) {
  const first = challenge.accepts[0] as Record<string, any> | undefined
  if (!first) throw new Error('the 402 names no payment requirement')
  const amount = amountOf(first)
  return {
    amount: amount?.toString() ?? null,
    amount_usdc: amount === null ? null : usdcDecimal(amount),
    asset: first.asset,
    asset_name: first.extra?.name ?? null,
    network: first.network,
    pay_to: first.payTo,
    scheme: first.scheme,
    max_timeout_seconds: first.maxTimeoutSeconds ?? null,
    resource: (challenge as { resource?: { url?: string } }).resource?.url ?? first.resource ?? null,
    x402_version: challenge.x402Version,
    accepts: challenge.accepts,
  }
}
