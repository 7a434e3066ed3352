// What a read of an entry (its record or its bytes) gets before anything is served, on the hot route and on
// Elysia's alike: withdrawn; served, with the receipt of the payment that paid for it; or answered already (the 402
// challenge, or 502/503 when a payment could not finish). The x402 answers are chain/x402's, copied out as they are.
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import type { Signer } from '../domain/auth.ts'
import type { Access } from '../domain/entries.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import type { Payment, PaymentOrRefusal } from '../chain/x402/payload.ts'
import { resourceServer, wantsPage, type Instructions, type Offer } from '../chain/x402/resource-server.ts'
import { paywallPage } from '../pages/paywall.ts'
import { PAGE_HEADERS } from '../pages/layout.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import type { Services } from './services.ts'
import { errorResponse } from '../edge/errors.ts'
import { checksumAddress } from '../chain/signatures.ts'
import { entryGood, type Good } from '../domain/purchases.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'

export type Gate<Made = Prepared | Response> =
  /** A deleted entry or feed, asked for by anyone but its owner. */
  | { kind: 'withdrawn' }
  /**
   * Serve it; `receipt`: the headers of the payment that paid for it, when one did, and `transaction` the chain's
   * transaction that paid (null when nothing was charged).
   */
  | { kind: 'serve'; receipt: Record<string, string> | null; transaction?: string | null }
  | { kind: 'answered'; answer: Made }

type Sold = 'record' | 'bytes'
/** What an entry's URL sells: its bytes at .../content, else its record. */
const soldAt = (path: string): Sold => (path.endsWith('/content') ? 'bytes' : 'record')

const WITHDRAWN: Gate<never> = { kind: 'withdrawn' }
/** About what a kept sign-in challenge (a 402's header in three pieces, ~4.1k characters with its bazaar) weighs. */
const SIGN_IN_CHALLENGE_CHARS = 6000
const SERVE: Gate<never> = { kind: 'serve', receipt: null }

const answered = <Made>(answer: Made): Gate<Made> => ({ kind: 'answered', answer })
const response = (i: Instructions) => new Response(i.body, { status: i.status, headers: i.headers })
const prepared = (i: Instructions): Prepared => ({ body: i.body, init: { status: i.status, headers: withCors(i.headers) } })

/** Whether an answer is a 402 (a challenge: to pay, or to pay again after a refused payment or proof). */
export const isChallenge = (answer: Prepared | Response): boolean =>
  (answer instanceof Response ? answer.status : answer.init.status) === 402

/** A gate's answer as a Response, for a route that cannot return a prepared one. */
export const asResponse = (answer: Prepared | Response): Response =>
  answer instanceof Response ? answer : new Response(answer.body, answer.init)

function withRetryAfter(answer: Response, seconds: number): Response {
  answer.headers.set('retry-after', String(seconds))
  return answer
}

export function entryGate(s: Services) {
  const x402 = resourceServer(s.config.networks)

  /**
   * A 402 made once, with a sign-in-with-x challenge of its own in its PAYMENT-REQUIRED: a challenge's nonce is good
   * for one proof, so no two answers share one.
   */
  const templates = new WeakMap<PriceTag, ReturnType<typeof x402.signInChallenge>>()
  function freshChallenge(kept: Prepared, tag: PriceTag): Prepared {
    // By the tag a hot answer keeps (made again when the records change), else as kept in the read memo.
    let fill = templates.get(tag)
    if (!fill) {
      fill = s.cached(
        `sign-in challenge:${tag.resource}`,
        () => x402.signInChallenge(tag, new URL(s.publicUrl())),
        () => SIGN_IN_CHALLENGE_CHARS,
      )
      templates.set(tag, fill)
    }
    const { nonce, issuedAt } = s.siwx.fresh()
    const headers = new Headers(kept.init.headers)
    for (const [name, value] of Object.entries(fill(nonce, issuedAt))) headers.set(name, value)
    return { body: kept.body, init: { status: kept.init.status, headers } }
  }

  /** The 402 to a caller who sent no payment is the same for everyone at this URL until the entry or feed changes. */
  const plainChallenge = (tag: PriceTag): Prepared =>
    freshChallenge(
      s.cached(
        `challenge:${tag.resource}`,
        () => prepared(x402.challenge(tag)),
        (c) => 2 * c.body.length,
      ),
      tag,
    )

  /** A 402 for a person in a browser: the page `made` for it (kept as long as the challenge is), its fresh nonce. */
  const pagedChallenge = async (tag: PriceTag, made: () => Promise<(offer: Offer) => string>): Promise<Prepared> =>
    freshChallenge(
      await s.cached.get(
        `paywall:${tag.resource}`,
        async () => prepared(x402.paywall(tag, await made(), PAGE_HEADERS)),
        (c) => 2 * c.body.length,
      ),
      tag,
    )
  /** The entry's paywall page. */
  const paywall = (feed: FeedRecord, entry: EntryRecord, tag: PriceTag, sold: Sold): Promise<Prepared> =>
    pagedChallenge(tag, async () => {
      const creator = await s.wallets.byAddress(feed.owner_wallet_address).catch(() => null)
      return (offer) => paywallPage({ feed, entry, creator, offer, sold, origin: s.publicUrl(), assetVersion: ASSET_VERSION })
    })

  /** A 402 saying why: a refused payment or proof, with a fresh challenge. */
  const refusedWith = (tag: PriceTag, reason: string): Gate =>
    answered(response(x402.challenge(tag, reason, s.siwx.challenge(tag.resource))))

  /**
   * A SIGN-IN-WITH-X proof: its wallet reads what it may (the owner, a buyer) with no payment. Otherwise the request
   * pays with the payment it carries too, or gets the 402 again saying why the proof did not sign it in.
   */
  async function signingIn(proof: string, feed: FeedRecord, entry: EntryRecord, tag: PriceTag, headers: Headers): Promise<Gate> {
    const checked = await s.siwx.check(proof)
    let reason: string
    if ('address' in checked) {
      const access = await s.entries.access(feed, entry, { address: checksumAddress(checked.address), network: null })
      if (access === 'withdrawn') return WITHDRAWN
      if (access !== 'pay') return SERVE
      reason = `not_entitled: ${checked.address} has not bought this entry; pay for it, or sign in with the wallet that did`
    } else reason = checked.refused
    const payment = x402.readPayment(headers)
    return payment ? paying(payment, entry, tag, null) : refusedWith(tag, reason)
  }

  /**
   * Pays with the request's payment: served with the receipt; a 402 when the payment is refused; 502 when the
   * facilitator or RPC failed before anything was charged; 503 while a charge may still land (it is recorded when
   * the chain shows it).
   */
  async function paying(payment: PaymentOrRefusal, entry: EntryRecord, tag: PriceTag, signer: Signer | null): Promise<Gate> {
    return payingFor(payment, entryGood(entry), tag, signer)
  }

  /** Pays for `good` (an entry, or a feed's pass) as `paying` does. */
  async function payingFor(payment: PaymentOrRefusal, good: Good, tag: PriceTag, signer: Signer | null): Promise<Gate> {
    const outcome = await s.purchases.pay(payment, good, tag, signer?.address ?? null)
    switch (outcome.kind) {
      case 'paid': // an unreadable payment never pays
        return { kind: 'serve', receipt: x402.receipt(payment as Payment, outcome), transaction: outcome.transaction }
      case 'refused':
        return refusedWith(tag, outcome.reason)
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
    if (signer === null && headers === null) return decide(s.entries.anonymousAccess(feed, entry), feed, entry, signer, headers, path)
    const access = signer === null ? Promise.resolve(s.entries.anonymousAccess(feed, entry)) : s.entries.access(feed, entry, signer)
    // A request's 402 is counted (one prepared for the hot route, without headers, is not: that route counts its own).
    return access
      .then((access) => decide(access, feed, entry, signer, headers, path))
      .then((passed) => {
        if (passed.kind === 'answered' && isChallenge(passed.answer)) s.challenges.served(feed.id, entry.id)
        return passed
      })
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
    const proof = headers && signer === null ? x402.readSignIn(headers) : null
    if (proof) return signingIn(proof, feed, entry, tag, headers!)
    const payment = headers && x402.readPayment(headers)
    if (payment) return paying(payment, entry, tag, signer)
    return headers && wantsPage(headers) ? paywall(feed, entry, tag, sold).then(answered) : answered(plainChallenge(tag))
  }

  /** What the entry's URL `path` (its record's or its bytes') costs. */
  const tagAt = (feed: FeedRecord, entry: EntryRecord, path: string): PriceTag =>
    s.entries.priceTag(feed, entry, `${s.publicUrl()}${path}`, soldAt(path))

  /** The paywall of the entry's URL `path`, for a person who must pay. */
  const paywallAt = (feed: FeedRecord, entry: EntryRecord, path: string): Promise<Prepared> =>
    paywall(feed, entry, tagAt(feed, entry, path), soldAt(path))

  return Object.assign(gate, { paywallAt, tagAt, freshChallenge, pagedChallenge, payingFor, plainChallenge })
}
