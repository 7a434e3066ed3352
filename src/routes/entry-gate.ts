// What a read of an entry (its record or its bytes) gets before anything is served, on the hot route and on
// Elysia's alike: withdrawn; served, with the receipt of the payment that paid for it; or answered already (the 402
// challenge, or 502/503 when a payment could not finish). The x402 answers are chain/x402's, copied out as they are.
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import type { Signer } from '../domain/auth.ts'
import type { Access } from '../domain/entries.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import type { Payment, PaymentOrRefusal } from '../chain/x402/payload.ts'
import { resourceServer, wantsPage, type Instructions } from '../chain/x402/resource-server.ts'
import { paywallPage } from '../pages/paywall.ts'
import { PAGE_HEADERS } from '../pages/layout.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import type { Services } from './services.ts'
import { errorResponse } from '../edge/errors.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'

export type Gate<Made = Prepared | Response> =
  /** A deleted entry or feed, asked for by anyone but its owner. */
  | { kind: 'withdrawn' }
  /** Serve it; `receipt`: the headers of the payment that paid for it, when one did. */
  | { kind: 'serve'; receipt: Record<string, string> | null }
  | { kind: 'answered'; answer: Made }

type Sold = 'record' | 'bytes'
/** What an entry's URL sells: its bytes at .../content, else its record. */
const soldAt = (path: string): Sold => (path.endsWith('/content') ? 'bytes' : 'record')

const WITHDRAWN: Gate<never> = { kind: 'withdrawn' }
const SERVE: Gate<never> = { kind: 'serve', receipt: null }

const answered = <Made>(answer: Made): Gate<Made> => ({ kind: 'answered', answer })
const response = (i: Instructions) => new Response(i.body, { status: i.status, headers: i.headers })
const prepared = (i: Instructions): Prepared => ({ body: i.body, init: { status: i.status, headers: withCors(i.headers) } })

/** A gate's answer as a Response, for a route that cannot return a prepared one. */
export const asResponse = (answer: Prepared | Response): Response =>
  answer instanceof Response ? answer : new Response(answer.body, answer.init)

function withRetryAfter(answer: Response, seconds: number): Response {
  answer.headers.set('retry-after', String(seconds))
  return answer
}

export function entryGate(s: Services) {
  const x402 = resourceServer(s.config.network)

  /** The 402 to a caller who sent no payment is the same for everyone at this URL until the entry or feed changes. */
  const plainChallenge = (tag: PriceTag): Prepared =>
    s.cached(
      `challenge:${tag.resource}`,
      () => prepared(x402.challenge(tag)),
      (c) => 2 * c.body.length,
    )

  /** The same 402 for a person in a browser: the paywall page, kept as long. */
  const paywall = (feed: FeedRecord, entry: EntryRecord, tag: PriceTag, sold: Sold): Promise<Prepared> =>
    s.cached.get(
      `paywall:${tag.resource}`,
      async () => {
        const creator = await s.wallets.byAddress(feed.owner_wallet_address).catch(() => null)
        return prepared(
          x402.paywall(tag, (offer) => paywallPage({ feed, entry, creator, offer, sold, assetVersion: ASSET_VERSION }), PAGE_HEADERS),
        )
      },
      (c) => 2 * c.body.length,
    )

  /**
   * Pays with the request's payment: served with the receipt; a 402 when the payment is refused; 502 when the
   * facilitator or RPC failed before anything was charged; 503 while a charge may still land (it is recorded when
   * the chain shows it).
   */
  async function paying(payment: PaymentOrRefusal, entry: EntryRecord, tag: PriceTag, signer: Signer | null): Promise<Gate> {
    const outcome = await s.purchases.pay(payment, entry, tag, signer?.address ?? null)
    switch (outcome.kind) {
      case 'paid':
        return { kind: 'serve', receipt: x402.receipt(payment as Payment, outcome) } // an unreadable payment never pays
      case 'refused':
        return answered(response(x402.challenge(tag, outcome.reason)))
      case 'unavailable':
        return answered(
          withRetryAfter(errorResponse('PAYMENT_BACKEND_UNAVAILABLE', 'the payment service is unavailable', outcome.reason), 10),
        )
      case 'pending':
        return answered(withRetryAfter(errorResponse('PAYMENT_PENDING', 'the payment is being settled', outcome.reason), 15))
    }
  }

  /**
   * `path`: the URL path asked for, which names what is sold (the record, or the bytes at .../content); it is only
   * asked for when the caller must pay. `headers` may carry a payment. Without a signer or headers there is nothing
   * to wait for: the hot route prepares that answer once per URL.
   */
  function gate(feed: FeedRecord, entry: EntryRecord, signer: null, headers: null, path: () => string): Gate<Prepared>
  function gate(feed: FeedRecord, entry: EntryRecord, signer: Signer | null, headers: Headers, path: () => string): Promise<Gate>
  function gate(
    feed: FeedRecord,
    entry: EntryRecord,
    signer: Signer | null,
    headers: Headers | null,
    path: () => string,
  ): Gate | Promise<Gate> {
    if (signer === null) return decide(s.entries.anonymousAccess(feed, entry), feed, entry, signer, headers, path)
    return s.entries.access(feed, entry, signer).then((access) => decide(access, feed, entry, signer, headers, path))
  }

  function decide(
    access: Access,
    feed: FeedRecord,
    entry: EntryRecord,
    signer: Signer | null,
    headers: Headers | null,
    path: () => string,
  ): Gate | Promise<Gate> {
    if (access === 'withdrawn') return WITHDRAWN
    if (access !== 'pay') return SERVE
    const at = path()
    const sold = soldAt(at)
    const tag = s.entries.priceTag(feed, entry, `${s.publicUrl()}${at}`, sold)
    const payment = headers && x402.readPayment(headers)
    if (payment) return paying(payment, entry, tag, signer)
    return headers && wantsPage(headers) ? paywall(feed, entry, tag, sold).then(answered) : answered(plainChallenge(tag))
  }

  /** The paywall of the entry's URL `path` (its record's or its bytes'), for a person who must pay. */
  function paywallAt(feed: FeedRecord, entry: EntryRecord, path: string): Promise<Prepared> {
    const sold = soldAt(path)
    return paywall(feed, entry, s.entries.priceTag(feed, entry, `${s.publicUrl()}${path}`, sold), sold)
  }

  return Object.assign(gate, { paywallAt })
}
