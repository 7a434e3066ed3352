// What the x402 v2 discovery routes share (the list, discovery.ts, and the search, discovery-search.ts): their
// filters as @x402/extensions' bazaar client sends them (specs/extensions/bazaar.md of the x402 repository,
// x402-foundation/x402 at 5dc34292: type, payTo, scheme, network, extensions), the page size, and the item shape.
import { t } from 'elysia'
import { DomainError } from '../domain/errors.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { integerQuery } from './params.ts'

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
const MAX_OFFSET = 1_000_000

export const DiscoveredV2 = t.Object({
  resource: t.String({ description: 'as in v1; a tool: the URL of the MCP server (POST /mcp)' }),
  type: t.Union([t.Literal('http'), t.Literal('mcp')], { description: 'http: a pass or an entry; mcp: a tool of /mcp' }),
  x402Version: t.Literal(2),
  accepts: t.Array(
    t.Unknown({ description: 'the x402 v2 payment requirement, as the 402 PAYMENT-REQUIRED header gives it (a tool: none, it is free)' }),
  ),
  lastUpdated: t.String({ description: 'ISO 8601' }),
  description: t.String(),
  mimeType: t.String({ description: 'what a paid call answers' }),
  serviceName: t.Optional(t.String()),
  tags: t.Optional(t.Array(t.String())),
  extensions: t.Object(
    {},
    {
      additionalProperties: true,
      description:
        "bazaar: the 402's declaration (method, route template, input and output); a tool's: input.type mcp, its toolName, " +
        'its inputSchema (as tools/list gives it) and transport streamable-http',
    },
  ),
  metadata: t.Object({}, { additionalProperties: true, description: 'as in v1; a tool: kind "mcp_tool", tool_name, title, price "free"' }),
})

/** A v2 list's and a search's filters (specs/extensions/bazaar.md). */
export const filterQuery = {
  type: t.Optional(t.String({ description: 'http (passes and entries) or mcp (the tools of /mcp)' })),
  payTo: t.Optional(t.String({ description: "what this address is paid for (any letter case): its owner's passes and entries" })),
  scheme: t.Optional(t.String({ description: 'exact (the only scheme here; a tool has none)' })),
  network: t.Optional(t.String({ description: "one of this server's networks (CAIP-2, or its name; a tool has none)" })),
  extensions: t.Optional(t.String({ description: 'bazaar (every item carries it)' })),
}
export type Filters = { [K in keyof typeof filterQuery]?: string }

/** `limit`, 1..MAX_LIMIT (default DEFAULT_LIMIT). */
export function limitOf(raw: string | undefined): number {
  const limit = integerQuery(raw, 'limit', 1) ?? DEFAULT_LIMIT
  if (limit > MAX_LIMIT) throw new DomainError('INVALID_PARAMETER', 'invalid limit', `limit must be an integer from 1 to ${MAX_LIMIT}`)
  return limit
}

export function pageOf(query: { limit?: string; offset?: string }): { limit: number; offset: number } {
  const offset = integerQuery(query.offset, 'offset') ?? 0
  if (offset > MAX_OFFSET) throw new DomainError('INVALID_PARAMETER', 'invalid offset', `offset must be at most ${MAX_OFFSET}`)
  return { limit: limitOf(query.limit), offset }
}

/** The payTo filter's address in lower case (addresses match in any letter case); a malformed one is refused (400). */
export function payToOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (!isWalletAddress(raw))
    throw new DomainError('INVALID_PARAMETER', 'invalid payTo', 'payTo must be an address: 0x followed by 40 hex characters')
  return raw.toLowerCase()
}
