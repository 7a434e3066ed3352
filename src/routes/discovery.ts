// What is for sale, for agents that find resources the x402 way, answered as a facilitator's discovery list is (the
// origin's manifest is well-known.ts's): GET /discovery/resources in x402 v1 (the x402 package's
// `useFacilitator({ url }).list()` reads it), and the same list in x402 v2 under /x402/v2: a v2 client's bazaar
// listResources() calls `${url}/discovery/resources` with no version of its own to ask by, so its url is
// `<origin>/x402/v2` (as a facilitator's discovery lives under its base URL); a client that can add a query asks
// /discovery/resources?x402Version=2. Each pass on sale is listed by its purchase URL (paid with POST), and each paid
// entry by its record's URL, with the requirement a payment there must meet.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { discovery, V2_DISCOVERY_BASE } from '../chain/x402/discovery.ts'
import { wellKnownRoutes } from './well-known.ts'
import { integerQuery } from './params.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { DomainError } from '../domain/errors.ts'
import { errors } from '../edge/openapi.ts'
import { forSale } from './for-sale.ts'

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
const DiscoveredV2 = t.Object({
  resource: t.String({ description: 'as in v1' }),
  type: t.Literal('http'),
  x402Version: t.Literal(2),
  accepts: t.Array(t.Unknown({ description: 'the x402 v2 payment requirement, as the 402 PAYMENT-REQUIRED header gives it' })),
  lastUpdated: t.String({ description: 'ISO 8601' }),
  description: t.String(),
  mimeType: t.String({ description: 'what a paid call answers' }),
  serviceName: t.Optional(t.String()),
  tags: t.Optional(t.Array(t.String())),
  extensions: t.Object(
    {},
    { additionalProperties: true, description: "bazaar: the 402's declaration (method, route template, input and output)" },
  ),
  metadata: t.Object({}, { additionalProperties: true, description: 'as in v1' }),
})
const Pagination = t.Object({ limit: t.Integer(), offset: t.Integer(), total: t.Integer() })
const DiscoveryList = t.Object(
  { x402Version: t.Integer(), items: t.Array(Discovered), pagination: Pagination },
  { description: 'Passes on sale now (newest feed first), then paid entries for sale now (newest first)' },
)
const DiscoveryListV2 = t.Object(
  { x402Version: t.Literal(2), items: t.Array(DiscoveredV2), pagination: Pagination },
  { description: 'The same list in x402 v2' },
)

const pageQuery = {
  limit: t.Optional(t.String({ description: `1..${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
  offset: t.Optional(t.String({ description: 'items to skip' })),
}

/** A v2 list's query (specs/extensions/bazaar.md): its filters, and the page. */
const v2Query = {
  type: t.Optional(t.String({ description: 'http (the only type here)' })),
  scheme: t.Optional(t.String({ description: 'v2: exact (the only scheme here)' })),
  network: t.Optional(t.String({ description: "v2: this server's network (CAIP-2, or its name)" })),
  extensions: t.Optional(t.String({ description: 'v2: bazaar (every item carries it)' })),
  payTo: t.Optional(t.String({ description: 'v2: not a filter here (400)' })),
  ...pageQuery,
}
type V2Query = { [K in keyof typeof v2Query]?: string }

function pageOf(query: { limit?: string; offset?: string }): { limit: number; offset: number } {
  const limit = integerQuery(query.limit, 'limit', 1) ?? DEFAULT_LIMIT
  const offset = integerQuery(query.offset, 'offset') ?? 0
  if (limit > MAX_LIMIT) throw new DomainError('INVALID_PARAMETER', 'invalid limit', `limit must be an integer from 1 to ${MAX_LIMIT}`)
  if (offset > MAX_OFFSET) throw new DomainError('INVALID_PARAMETER', 'invalid offset', `offset must be at most ${MAX_OFFSET}`)
  return { limit, offset }
}

export const discoveryRoutes = (s: Services) => {
  const lists = discovery(s.config.networks)
  const page = forSale(s)

  /** The v2 list (its filters matching all or nothing: everything here is http, exact, on our network, with a bazaar). */
  async function v2Answer(query: V2Query): Promise<Response> {
    const { limit, offset } = pageOf(query)
    if (query.payTo !== undefined)
      throw new DomainError('INVALID_PARAMETER', 'invalid payTo', 'payTo is not a filter here: list, then read accepts[].payTo')
    if (!lists.matches(query)) return jsonResponse(JSON.stringify(lists.v2List([], { limit, offset, total: 0 })))
    return jsonResponse(
      await s.cached.get(`discovery v2:${limit}:${offset}`, async (staleFrom) => {
        const { items, total } = await page(limit, offset, staleFrom)
        return JSON.stringify(lists.v2List(items, { limit, offset, total }))
      }),
    )
  }

  return new Elysia({ tags: ['Discovery'] })
    .use(wellKnownRoutes(s))
    .get(
      '/discovery/resources',
      async ({ query }) => {
        if (query.x402Version === '2') return v2Answer(query)
        if (query.x402Version !== undefined && query.x402Version !== '1')
          throw new DomainError('INVALID_PARAMETER', 'invalid x402Version', 'x402Version must be 1 or 2')
        const { limit, offset } = pageOf(query)
        const type = query.type ?? 'http'
        return jsonResponse(
          await s.cached.get(`discovery:${type}:${limit}:${offset}`, async (staleFrom) => {
            if (type !== 'http') return JSON.stringify(lists.v1List([], { limit, offset, total: 0 }))
            const { items, total } = await page(limit, offset, staleFrom)
            return JSON.stringify(lists.v1List(items, { limit, offset, total }))
          }),
        )
      },
      {
        query: t.Object({
          x402Version: t.Optional(t.String({ description: '1 (the default) or 2: the same list in x402 v2, as at /x402/v2' })),
          ...v2Query,
        }),
        response: { 200: t.Union([DiscoveryList, DiscoveryListV2]), ...errors(400) },
        detail: {
          summary: 'Paid resources for sale (x402 discovery)',
          description:
            'The x402 discovery list: each feed pass on sale now (bought with POST at its URL), then each paid entry on ' +
            "sale now, with its payment requirement. The x402 package's useFacilitator({ url: <this server> }).list() reads " +
            'it (x402 v1); with x402Version=2, the v2 list (its filters apply then).',
        },
      },
    )
    .get(`${V2_DISCOVERY_BASE}/discovery/resources`, ({ query }) => v2Answer(query), {
      query: t.Object(v2Query),
      response: { 200: DiscoveryListV2, ...errors(400) },
      detail: {
        summary: 'Paid resources for sale (x402 discovery, v2)',
        description:
          'The same list in x402 v2, each item with its v2 requirement and its bazaar declaration (how to call it, ' +
          'what it answers). @x402/extensions\' withBazaar(new HTTPFacilitatorClient({ url: "<this server>/x402/v2" })) ' +
          '.extensions.bazaar.listResources() reads it.',
      },
    })
}
