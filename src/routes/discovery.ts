// What is for sale, for agents that find resources the x402 way: GET /discovery/resources answers as a facilitator's
// discovery list does (so the x402 package's `useFacilitator({ url }).list()` reads it), and /.well-known/x402 says
// where it is. Each pass on sale is listed by its purchase URL (paid with POST), and each paid entry by its record's
// URL, with the requirement a payment there must meet.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { resourceServer } from '../chain/x402/resource-server.ts'
import { integerQuery } from './params.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { DomainError } from '../domain/errors.ts'
import { errors } from '../edge/openapi.ts'
import { nowSeconds } from '../lib/clock.ts'
import type { RecentEntry } from '../store/stats.ts'
import type { PassOnSale } from '../store/pass-offers.ts'

const DEFAULT_LIMIT = 20
const MAX_LIMIT = 100
const MAX_OFFSET = 1_000_000

const Discovered = t.Object({
  resource: t.String({
    description: "an entry's URL (GET: pay there with x402, get the entry with content_url), or a feed's pass purchase URL (POST)",
  }),
  type: t.Literal('http'),
  x402Version: t.Integer(),
  accepts: t.Array(
    t.Unknown({
      description: "the x402 v1 payment requirement, as the 402 gives it (a pass's adds outputSchema.input.method: POST)",
    }),
  ),
  lastUpdated: t.String({ description: 'ISO 8601' }),
  metadata: t.Object(
    {},
    {
      additionalProperties: true,
      description:
        'kind "entry": feed_id, feed_name, entry_id, title, description, mime_type, tags, category; kind "pass": method ' +
        "(POST), feed_id, feed_name, duration_s, description (the offer's, else the feed's), tags, category",
    },
  ),
})
const DiscoveryList = t.Object(
  {
    x402Version: t.Integer(),
    items: t.Array(Discovered),
    pagination: t.Object({ limit: t.Integer(), offset: t.Integer(), total: t.Integer() }),
  },
  { description: 'Passes on sale now (newest feed first), then paid entries for sale now (newest first)' },
)

export const discoveryRoutes = (s: Services) => {
  const x402 = resourceServer(s.config.network)

  const passItem = ({ feed, category_name }: PassOnSale) => {
    const offer = feed.pass!
    const tag = s.passes.priceTag(feed, offer, `${s.publicUrl()}/v1/feeds/${feed.id}/pass/purchases`)
    const metadata = {
      kind: 'pass',
      method: 'POST',
      feed_id: feed.id,
      feed_name: feed.name,
      duration_s: offer.duration_s,
      description: offer.description ?? feed.description,
      tags: feed.tags,
      category: category_name,
    }
    return x402.discovered(tag, offer.updated_at, metadata, 'POST')
  }

  const entryItem = (e: RecentEntry) => {
    const path = `/v1/feeds/${e.feed_id}/entries/${e.id}`
    const tag = s.entries.priceTag({ owner_wallet_address: e.owner_wallet }, e, `${s.publicUrl()}${path}`, 'record')
    return x402.discovered(tag, e.updated_at, {
      kind: 'entry',
      feed_id: e.feed_id,
      feed_name: e.feed_name,
      entry_id: e.id,
      title: e.title,
      description: e.description,
      mime_type: e.mime_type,
      tags: e.tags,
      category: e.category_name,
    })
  }

  return new Elysia({ tags: ['Discovery'] })
    .get(
      '/discovery/resources',
      async ({ query }) => {
        const limit = integerQuery(query.limit, 'limit', 1) ?? DEFAULT_LIMIT
        const offset = integerQuery(query.offset, 'offset') ?? 0
        if (limit > MAX_LIMIT)
          throw new DomainError('INVALID_PARAMETER', 'invalid limit', `limit must be an integer from 1 to ${MAX_LIMIT}`)
        if (offset > MAX_OFFSET) throw new DomainError('INVALID_PARAMETER', 'invalid offset', `offset must be at most ${MAX_OFFSET}`)
        const type = query.type ?? 'http'
        return jsonResponse(
          await s.cached.get(`discovery:${type}:${limit}:${offset}`, async (staleFrom) => {
            if (type !== 'http') return JSON.stringify({ x402Version: 1, items: [], pagination: { limit, offset, total: 0 } })
            // The counts are one read each per database version (the entries' also per minute: early access ends by the
            // clock), whatever the page; a page past the end reads nothing.
            const [entryTotal, passTotal] = await Promise.all([
              s.cached.get(
                'discovery:total',
                async (totalStaleFrom) => (totalStaleFrom(nowSeconds() + 60), s.stats.forSaleCount()),
                () => 16,
              ),
              s.cached.get(
                'discovery:passes',
                () => s.passes.onSaleCount(),
                () => 16,
              ),
            ])
            // One list, cut into pages: the passes first (at most one a feed, each reading many entries), then the
            // entries; an offset past the passes is an offset into the entries.
            const passes = offset < passTotal ? await s.passes.onSale(limit, offset) : []
            const entryOffset = Math.max(0, offset - passTotal)
            const entryLimit = limit - passes.length
            const entries = entryLimit > 0 && entryOffset < entryTotal ? await s.stats.forSale(entryLimit, entryOffset) : []
            for (const e of entries) if (e.expires_at !== null) staleFrom(e.expires_at)
            const items = [...passes.map(passItem), ...entries.map(entryItem)]
            const total = passTotal + entryTotal
            return JSON.stringify({ x402Version: 1, items, pagination: { limit, offset, total } })
          }),
        )
      },
      {
        query: t.Object({
          type: t.Optional(t.String({ description: 'http (the only type here)' })),
          limit: t.Optional(t.String({ description: `1..${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
          offset: t.Optional(t.String({ description: 'items to skip' })),
        }),
        response: { 200: DiscoveryList, ...errors(400) },
        detail: {
          summary: 'Paid resources for sale (x402 discovery)',
          description:
            'The x402 discovery list: each feed pass on sale now (bought with POST at its URL), then each paid entry on ' +
            "sale now, with its payment requirement. The x402 package's useFacilitator({ url: <this server> }).list() reads it.",
        },
      },
    )
    .get(
      '/.well-known/x402',
      () =>
        jsonResponse(
          JSON.stringify({
            x402Version: 1,
            name: 'Trellis',
            network: s.config.network.name,
            asset: { address: s.config.network.usdcAddress, symbol: 'USDC', decimals: 6 },
            discovery: `${s.publicUrl()}/discovery/resources`,
            openapi: `${s.publicUrl()}/v1/openapi.json`,
          }),
        ),
      {
        response: {
          200: t.Object({
            x402Version: t.Integer(),
            name: t.String(),
            network: t.String(),
            asset: t.Object({ address: t.String(), symbol: t.String(), decimals: t.Integer() }),
            discovery: t.String(),
            openapi: t.String(),
          }),
        },
        detail: {
          summary: 'Where the x402 discovery list is',
          description: 'For agents: the network, the token, the discovery list and the API document.',
        },
      },
    )
}
