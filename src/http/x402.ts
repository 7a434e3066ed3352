// The x402 edge of a paid entry: the 402 challenge (v1 body and v2 header), paying with X-PAYMENT (v1) or
// PAYMENT-SIGNATURE (v2), and the result header.
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import { v1Requirement, v2Challenge, type PriceTag } from '../chain/x402/requirements.ts'
import { encodeChallenge, encodeSettlement, PAYMENT_REQUIRED, paymentHeaderOf, settlementHeaderName, type Settlement } from '../chain/x402/headers.ts'
import { REASONS } from '../chain/x402/reasons.ts'
import type { Services } from './services.ts'
import { errorResponse } from './errors.ts'
import { withCors, type Prepared } from './edge.ts'
import { safeMediaType } from '../domain/media-type.ts'

const NO_PAYMENT = REASONS.noPayment
const JSON_UTF8 = 'application/json; charset=utf-8'

function withRetryAfter(response: Response, seconds: number): Response {
  response.headers.set('retry-after', String(seconds))
  return response
}

export function x402Edge(s: Services) {
  /** What a paid entry costs at this path; the requirements are always rebuilt from this, never from a payload. */
  function priceTag(feed: FeedRecord, entry: EntryRecord, path: string): PriceTag {
    return {
      amount: entry.price.toString(),
      payTo: feed.owner_wallet_address, // stored in checksum form
      resource: `${s.publicUrl()}${path}`,
      description: entry.title ?? `Entry ${entry.id}`,
      mimeType: path.endsWith('/content') ? safeMediaType(entry.mime_type) : 'application/json',
    }
  }

  /** The x402 v1 body and the same requirement as a v2 PAYMENT-REQUIRED header. */
  const challengeOf = (tag: PriceTag, error: string) => ({
    body: JSON.stringify({ x402Version: 1, error, accepts: [v1Requirement(s.config.network, tag)] }),
    header: encodeChallenge(v2Challenge(s.config.network, tag, error)),
  })

  function prepared(tag: PriceTag): Prepared {
    const { body, header } = challengeOf(tag, NO_PAYMENT)
    return { body, init: { status: 402, headers: withCors({ 'content-type': JSON_UTF8, [PAYMENT_REQUIRED]: header }) } }
  }
  /** The plain challenge (no payment sent) is the same for every caller until the entry or feed changes. */
  const plainChallenge = (tag: PriceTag): Prepared => s.cached(`challenge:${tag.resource}`, () => prepared(tag), (c) => 2 * c.body.length)

  /** 402 with the challenge, and the settlement's result header when a payment was refused. */
  function paymentRequired(tag: PriceTag, error: string = NO_PAYMENT, failed?: Settlement, version: 1 | 2 = 1): Response {
    if (!failed && error === NO_PAYMENT) {
      const plain = plainChallenge(tag)
      return new Response(plain.body, plain.init)
    }
    const { body, header } = challengeOf(tag, error)
    const headers: Record<string, string> = { 'content-type': JSON_UTF8, [PAYMENT_REQUIRED]: header }
    if (failed) headers[settlementHeaderName(version)] = encodeSettlement(failed)
    return new Response(body, { status: 402, headers })
  }

  /**
   * Pays with the request's X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2) header: the result header on success; a 402 when
   * the payment is refused; 502 when the facilitator or RPC failed before anything was charged; 503 while a charge
   * may still land (it is recorded when the chain shows it).
   */
  async function payOrChallenge(feed: FeedRecord, entry: EntryRecord, request: Request, signer: string | null): Promise<{ header: [string, string] } | Response> {
    const tag = priceTag(feed, entry, new URL(request.url).pathname)
    const payment = paymentHeaderOf(request.headers)
    if (!payment) return paymentRequired(tag)
    const outcome = await s.purchases.pay(payment, entry, tag, signer)
    switch (outcome.kind) {
      case 'paid':
        return { header: [settlementHeaderName(outcome.version), encodeSettlement(outcome.settlement)] }
      case 'refused':
        return paymentRequired(tag, outcome.reason, outcome.settlement, outcome.version)
      case 'unavailable':
        return withRetryAfter(errorResponse('PAYMENT_BACKEND_UNAVAILABLE', 'the payment service is unavailable', outcome.reason), 10)
      case 'pending':
        return withRetryAfter(errorResponse('PAYMENT_PENDING', 'the payment is being settled', outcome.reason), 15)
    }
  }

  /** The plain challenge at this (canonical) path, made for the caller to keep: no payment was sent. */
  const prepareChallenge = (feed: FeedRecord, entry: EntryRecord, path: string): Prepared => prepared(priceTag(feed, entry, path))

  return { payOrChallenge, prepareChallenge }
}
