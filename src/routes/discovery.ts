// What is for sale, for agents that find resources the x402 way, answered as a facilitator's discovery list is (the
// origin's manifest is well-known.ts's): GET /discovery/resources in x402 v1 (the x402 package's
// `useFacilitator({ url }).list()` reads it), and the same list in x402 v2 under /x402/v2: a v2 client's bazaar
// listResources() calls `${url}/discovery/resources` with no version of its own to ask by, so its url is
// `<origin>/x402/v2` (as a facilitator's discovery lives under its base URL); a client that can add a query asks
// /discovery/resources?x402Version=2. Each pass on sale is listed by its purchase URL (paid with POST), and each paid
// entry by its record's URL, with the requirement a payment there must meet; the v2 list then lists the tools of /mcp
// (type mcp, free: see chain/x402/mcp-discovery.ts). The v2 search is discovery-search.ts's.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { discovery, V2_DISCOVERY_BASE } from '../chain/x402/discovery.ts'
import { wellKnownRoutes } from './well-known.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { DomainError } from '../domain/errors.ts'
import { errors } from '../edge/openapi.ts'
import { forSale } from './for-sale.ts'
import { DEFAULT_LIMIT, DiscoveredV2, filterQuery, MAX_LIMIT, pageOf, payToOf, type Filters } from './discovery-query.ts'
import { discoverySearchRoutes } from './discovery-search.ts'
import { toolItems } from './mcp-tools.ts'

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
const Pagination = t.Object({ limit: t.Integer(), offset: t.Integer(), total: t.Integer() })
const DiscoveryList = t.Object(
  { x402Version: t.Integer(), items: t.Array(Discovered), pagination: Pagination },
  { description: 'Passes on sale now (newest feed first), then paid entries for sale now (newest first)' },
)
const DiscoveryListV2 = t.Object(
  { x402Version: t.Literal(2), items: t.Array(DiscoveredV2), pagination: Pagination },
  { description: 'The same list in x402 v2, then the tools of /mcp (type mcp)' },
)

const pageQuery = {
  limit: t.Optional(t.String({ description: `1..${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })),
  offset: t.Optional(t.String({ description: 'items to skip' })),
}

/** A v2 list's query (specs/extensions/bazaar.md): its filters, and the page. */
const v2Query = { ...filterQuery, ...pageQuery }
type V2Query = Filters & { limit?: string; offset?: string }

export const discoveryRoutes = (s: Services) => {
  const lists = discovery(s.config.networks)
  const page = forSale(s)

  /**
   * The v2 list: passes and entries (of one owner, with payTo: filtered in the queries), then the tools; the other
   * filters match a kind of item whole (every http item is exact, on our networks, with a bazaar; a tool is free).
   */
  async function v2Answer(query: V2Query): Promise<Response> {
    const { limit, offset } = pageOf(query)
    const payTo = payToOf(query.payTo)
    const kinds = lists.kinds(query)
    return jsonResponse(
      await s.cached.get(`discovery v2:${limit}:${offset}:${payTo ?? ''}:${kinds.http}:${kinds.mcp}`, async (staleFrom) => {
        const paid = kinds.http ? await page(limit, offset, staleFrom, payTo) : { items: [], total: 0 }
        const tools = kinds.mcp ? await toolItems(s) : []
        const from = Math.max(0, offset - paid.total)
        const shown = tools.slice(from, from + limit - paid.items.length)
        return JSON.stringify(lists.v2List(paid.items, { limit, offset, total: paid.total + tools.length }, shown))
      }),
    )
  }

  return new Elysia({ tags: ['Discovery'] })
    .use(wellKnownRoutes(s))
    .use(discoverySearchRoutes(s))
    .get(
      '/discovery/resources',
      async ({ query }) => {
        if (query.x402Version === '2') return v2Answer(query)
        if (query.x402Version !== undefined && query.x402Version !== '1')
          throw new DomainError('INVALID_PARAMETER', 'invalid x402Version', 'x402Version must be 1 or 2')
        const { limit, offset } = pageOf(query)
        const payTo = payToOf(query.payTo)
        // v1 lists http resources only (no tools); of its filters, type and payTo apply.
        const type = query.type ?? 'http'
        return jsonResponse(
          await s.cached.get(`discovery:${type}:${limit}:${offset}:${payTo ?? ''}`, async (staleFrom) => {
            if (type !== 'http') return JSON.stringify(lists.v1List([], { limit, offset, total: 0 }))
            const { items, total } = await page(limit, offset, staleFrom, payTo)
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
            "it (x402 v1; payTo: one seller's); with x402Version=2, the v2 list (all its filters apply, and the tools follow).",
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
          "what it answers), then the tools of POST /mcp as items of type mcp (free, declared in the bazaar's MCP form). " +
          'Filters: type (http, mcp), payTo (what that address is paid for), scheme, network, extensions. ' +
          '@x402/extensions\' withBazaar(new HTTPFacilitatorClient({ url: "<this server>/x402/v2" })) ' +
          '.extensions.bazaar.listResources() reads it.',
      },
    })
}
