// The origin's own x402 manifest, at /.well-known/x402 and at /.well-known/x402.json (the draft's canonical path),
// after the draft "Discovery: /.well-known/x402.json" (specs/extensions/well-known-discovery.md of the x402
// repository, x402-foundation/x402 at 268f0716, status Draft): {x402Version: 2, lastUpdated, items}, each item a
// resource with its requirements (price, network, token), how to call it and what it answers. The draft lists a
// server's routes; here what is sold is each pass and entry, so the items are the first of the discovery list, and
// the fields after the draft's say where the whole list is (in v1 and v2), the API document and the agents' guide.
// After them come the tools of /mcp, as the draft's mcp items (input: toolName, inputSchema, transport; free).
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { discovery, V2_DISCOVERY_BASE } from '../chain/x402/discovery.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { nowSeconds } from '../lib/clock.ts'
import { forSale } from './for-sale.ts'
import { toolManifestItems } from './mcp-tools.ts'

/** How many of the things for sale the manifest lists (a discovery page's most). */
export const MANIFEST_ITEMS = 100

const Manifest = t.Object(
  {
    x402Version: t.Literal(2),
    lastUpdated: t.Integer({ description: 'Unix seconds: when this manifest was made' }),
    items: t.Array(
      t.Object({
        resource: t.Object(
          { url: t.String(), description: t.String(), mimeType: t.String() },
          { additionalProperties: true, description: 'the URL, its words, what a paid call answers; serviceName and tags' },
        ),
        type: t.Union([t.Literal('http'), t.Literal('mcp')]),
        accepts: t.Array(t.Unknown({ description: 'x402 v2 payment requirements (advisory: the live 402 decides); a tool: none' })),
        input: t.Object(
          {},
          {
            additionalProperties: true,
            description:
              'http: method and routeTemplate (a pass: bodyType json, an empty body); ' +
              'mcp: toolName, inputSchema (as tools/list gives it), transport streamable-http',
          },
        ),
        output: t.Optional(t.Object({ mimeType: t.String() }, { additionalProperties: true, description: 'and an example' })),
      }),
      { description: `passes on sale, then paid entries for sale, newest first (the first ${MANIFEST_ITEMS}); then the tools of /mcp` },
    ),
    name: t.String(),
    total: t.Integer({ description: 'how many things are for sale (items holds the first, then the tools)' }),
    network: t.String({ description: "this server's network by name (base, base-sepolia), as before the manifest" }),
    networks: t.Array(t.String({ description: 'CAIP-2' })),
    asset: t.Object({ address: t.String(), symbol: t.String(), decimals: t.Integer() }),
    discovery: t.Object({ v1: t.String(), v2: t.String() }, { description: 'the whole list, paginated, in x402 v1 and v2' }),
    openapi: t.String(),
    llms: t.String({ description: 'the API described for agents (llms.txt)' }),
  },
  { description: 'The x402 discovery manifest of this origin (draft specs/extensions/well-known-discovery.md)' },
)

export const wellKnownRoutes = (s: Services) => {
  const lists = discovery(s.config.networks)
  const page = forSale(s)
  const manifest = async () =>
    jsonResponse(
      await s.cached.get('well-known x402', async (staleFrom) => {
        const { items, total } = await page(MANIFEST_ITEMS, 0, staleFrom)
        const origin = s.publicUrl()
        const manifest = lists.manifest(items, nowSeconds())
        return JSON.stringify({
          ...manifest,
          items: [...manifest.items, ...(await toolManifestItems(s))],
          name: 'Trellis',
          total,
          network: s.config.network.name,
          networks: lists.networks,
          asset: { address: s.config.network.usdcAddress, symbol: 'USDC', decimals: 6 },
          discovery: { v1: `${origin}/discovery/resources`, v2: `${origin}${V2_DISCOVERY_BASE}/discovery/resources` },
          openapi: `${origin}/openapi.json`,
          llms: `${origin}/llms.txt`,
        })
      }),
    )
  const hook = {
    response: { 200: Manifest },
    detail: {
      summary: "This origin's x402 manifest",
      description:
        'For agents and indexers: what is for sale (the first of the discovery list) with its price, network and token, ' +
        "how to call it, and where the whole list, the API document and the agents' guide are. " +
        'After the x402 draft specs/extensions/well-known-discovery.md; also at /.well-known/x402.json.',
    },
  }
  return new Elysia({ tags: ['Discovery'] })
    .get('/.well-known/x402', manifest, hook)
    .get('/.well-known/x402.json', manifest, { ...hook, detail: { ...hook.detail, hide: true } })
}
