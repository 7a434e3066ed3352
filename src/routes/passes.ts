// Feed passes: the offer on sale (owner: PUT, DELETE; anyone: GET), and how a pass looks on the wire.
import { Elysia } from 'elysia'
import type { PassOfferRecord } from '../models/records.ts'
import { PassOffer, PriceWarningHeaders, PutPass } from '../models/index.ts'
import { cheapPriceWarning, costliest, warningHeaders } from '../domain/cheap-prices.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { uuid } from './params.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { withHeaders } from '@elysiajs/openapi'

/** A pass offer on the wire: its price as `{amount, currency}`, the amount as text. */
export const passBody = ({ price, ...offer }: PassOfferRecord): PassOffer => ({
  ...offer,
  price: { amount: price.toString(), currency: 'USDC' },
})

export const passRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/feeds/:feed_id/pass', tags: ['Passes'] })
    .use(walletAuth(s.auth))
    // Kept as JSON text until the records change, as the feed's own read is.
    .get(
      '',
      async ({ params }) => {
        const id = uuid(params.feed_id, 'feed_id')
        return jsonResponse(await s.cached.get(`pass:${id}`, async () => JSON.stringify(passBody(await s.passes.offer(id)))))
      },
      {
        response: { 200: PassOffer, ...errors(404, 451) },
        detail: {
          summary: "Get a feed's pass on sale",
          description:
            'A pass reads every paid entry of the feed, those published later too, for duration_s. 404 ' +
            'PASS_NOT_FOUND when none is on sale.',
        },
      },
    )
    .put(
      '',
      async ({ params, body, signer, set }) => {
        const offer = await s.passes.put(signer, uuid(params.feed_id, 'feed_id'), body)
        // Warned as an entry is (routes/entries.ts `written` says why a header and an optional field).
        const warning = cheapPriceWarning(offer.price, costliest(s.config.networks), 'pass')
        Object.assign(set.headers, warningHeaders(warning))
        return warning ? { ...passBody(offer), price_warning: warning } : passBody(offer)
      },
      {
        wallet: true,
        body: PutPass,
        response: { 200: withHeaders(PassOffer, PriceWarningHeaders) as typeof PassOffer, ...errors(400, 403, 404, 409, 451) },
        detail: {
          summary: "Put the feed's pass on sale, or change its terms (owner)",
          description:
            'price.amount: digits, USDC in its smallest unit, > 0; duration_s: 60 (a minute) to 31536000 (a year). A change ' +
            'applies to later buyers only. 409 FEED_INACTIVE for a deleted feed. A price below the settlement cost is ' +
            'accepted with a warning (Trellis-Warning, price_warning).',
        },
      },
    )
    .delete(
      '',
      async ({ params, signer }) => {
        await s.passes.withdraw(signer, uuid(params.feed_id, 'feed_id'))
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Off sale'), ...errors(403, 404, 451) },
        detail: { summary: "Take the feed's pass off sale (owner)", description: 'No new sales; holders keep their time.' },
      },
    )
