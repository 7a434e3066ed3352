// Buying a feed's pass (x402, as an entry is bought, by the same purchase machinery) and the passes a wallet holds.
import { Elysia, t } from 'elysia'
import type { FeedRecord, PassRecord } from '../models/records.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import type { Prepared } from '../edge/request-wrapper.ts'
import { Page, PaidHeaders, Pass, PaymentRequired, PaymentRequiredHeaders } from '../models/index.ts'
import { withHeaders } from '@elysiajs/openapi'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { uuid } from './params.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { asResponse, entryGate, isChallenge } from './entry-gate.ts'
import { resourceServer, wantsPage } from '../chain/x402/resource-server.ts'
import { passPaywallPage } from '../pages/pass.ts'
import { creatorLink } from '../pages/paywall.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import { checksumAddress } from '../chain/signatures.ts'
import { publicTransactionId } from '../domain/transactions.ts'
import { fail } from '../domain/errors.ts'
import { errors } from '../edge/openapi.ts'

/** A pass on the wire: its holder checksummed, its sale by the ledger's id. */
export const heldPassBody = (p: PassRecord): Pass => ({
  id: p.id,
  feed_id: p.feed_id,
  holder: checksumAddress(p.holder_lc),
  starts_at: p.starts_at,
  expires_at: p.expires_at,
  transaction_id: publicTransactionId(p.transaction_id),
})

/** The 402 of a feed's pass for a person in a browser: its paywall page. */
export const passPaywall = (s: Services, gate: ReturnType<typeof entryGate>, feed: FeedRecord, tag: PriceTag): Promise<Prepared> =>
  gate.pagedChallenge(tag, async () => {
    const by = creatorLink(feed, await s.wallets.byAddress(feed.owner_wallet_address).catch(() => null))
    return (offer) => passPaywallPage({ feed, pass: feed.pass!, offer, creatorLink: by, assetVersion: ASSET_VERSION })
  })

export const passPurchaseRoutes = (s: Services) => {
  const x402 = resourceServer(s.config.networks)
  const gate = entryGate(s)
  return new Elysia({ tags: ['Passes'] })
    .use(walletAuth(s.auth))
    .post(
      '/v1/feeds/:feed_id/pass/purchases',
      async ({ params, signer, request }) => {
        const feed = await s.feeds.get(uuid(params.feed_id, 'feed_id'))
        const offer = feed.pass ?? fail('PASS_NOT_FOUND', 'this feed has no pass on sale')
        const tag = s.passes.priceTag(feed, offer, `${s.publicUrl()}${new URL(request.url).pathname}`)
        const payment = x402.readPayment(request.headers)
        const passed = payment
          ? await gate.payingFor(payment, { kind: 'pass', feed, offer }, tag, signer)
          : ({
              kind: 'answered',
              answer: wantsPage(request.headers) ? await passPaywall(s, gate, feed, tag) : gate.plainChallenge(tag),
            } as const)
        if (passed.kind === 'answered' && isChallenge(passed.answer)) s.challenges.served(feed.id, null)
        if (passed.kind !== 'serve') return passed.kind === 'answered' ? asResponse(passed.answer) : fail('PASS_NOT_FOUND', 'no pass')
        if (!passed.transaction) fail('OWNER_NEEDS_NO_PASS', "the feed's owner reads every entry of it without a pass; nothing was charged")
        const sale = await s.transactions.byHash(passed.transaction!)
        const pass = (await s.passes.bought(sale.id))!
        const headers = { 'content-type': 'application/json', ...(passed.receipt ?? {}) }
        return new Response(JSON.stringify(heldPassBody(pass)), { status: 201, headers })
      },
      {
        walletOptional: true,
        response: {
          201: withHeaders(Pass, PaidHeaders) as typeof Pass,
          402: withHeaders(PaymentRequired, PaymentRequiredHeaders),
          ...errors(404, 409, 451, 502, 503),
        },
        detail: {
          summary: "Buy the feed's pass (x402)",
          description:
            "Answers as a paid entry does: 402 with the pass's requirement, then paid with X-PAYMENT or PAYMENT-SIGNATURE: " +
            '201 the pass, with the settlement header. Buying again while a pass runs extends it from its end.',
        },
      },
    )
    .get(
      '/v1/passes',
      async ({ query, signer }) => {
        const limit = pageSize(query.page_size)
        const scope = `passes:${query.holder.toLowerCase()}`
        const rows = await s.passes.held(signer, query.holder, s.pages.decode<string>(scope, query.page_token), limit + 1)
        const result = page(rows, limit, s.pages, scope, (last) => last.id)
        return { data: result.data.map(heldPassBody), pagination: result.pagination }
      },
      {
        wallet: true,
        query: t.Object({ ...pageQuery, holder: t.String({ description: 'the wallet whose passes to list: the signer' }) }),
        response: { 200: Page(Pass), ...errors(403, 422) },
        detail: { summary: "List a wallet's passes (that wallet only)", description: 'Newest first, cursor paginated.' },
      },
    )
}
