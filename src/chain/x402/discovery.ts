// What is for sale, in the shapes x402 discovery reads it: a facilitator's list (GET /discovery/resources) in v1 (the
// x402 package's DiscoveredResource, which its useFacilitator().list() reads) and in v2 (@x402/extensions'
// DiscoveryResource, which withBazaar(new HTTPFacilitatorClient()).extensions.bazaar.listResources() reads), and an
// origin's own manifest (/.well-known/x402, after the draft specs/extensions/well-known-discovery.md of the x402
// repository, x402-foundation/x402 at 268f0716). Each item is made from the price tag its URL's 402 is made from.
import type { DiscoveryResource } from '@x402/extensions/bazaar'
import type { NetworkInfo } from '../../config.ts'
import { v1Requirement, v2Requirement, type PriceTag } from './requirements.ts'
import { bazaarExtension, serviceMetadata } from './bazaar.ts'
import { caip2 } from './networks.ts'
import { MAX_AMOUNT, usdcDecimal } from '../../lib/money.ts'

export interface Listed {
  tag: PriceTag
  method: 'GET' | 'POST'
  updatedAt: number
  metadata: Record<string, unknown>
}

export interface Pagination {
  limit: number
  offset: number
  total: number
}

/** A v2 list's filters, as the bazaar client sends them (specs/extensions/bazaar.md, GET /discovery/resources). */
export interface V2Filters {
  type?: string
  payTo?: string
  scheme?: string
  network?: string
  extensions?: string
}

/** Which kinds of item a v2 list's filters can match: http (passes and entries), mcp (the tools of /mcp). */
export interface Kinds {
  http: boolean
  mcp: boolean
}

/**
 * Where a v2 client's facilitator URL points for our list: its bazaar listResources() calls `${url}/discovery/resources`
 * and has no version of its own to ask by, so the v2 list lives under a base of its own, as a facilitator's does.
 */
export const V2_DISCOVERY_BASE = '/x402/v2'

const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

/** Lists what is sold on `networks` (each item accepts a payment on any of them, as its 402 does). */
export function discovery(networks: readonly NetworkInfo[]) {
  const first = networks[0]!
  const chains = networks.map(caip2)
  /**
   * A v1 item. One bought with another method than GET says so in its requirement's outputSchema.input, as x402 v1
   * has clients read it.
   */
  const v1Item = ({ tag, method, updatedAt, metadata }: Listed) => {
    const accepts = networks.map((network) => {
      const requirement = v1Requirement(network, tag)
      return method === 'GET' ? requirement : { ...requirement, outputSchema: { input: { type: 'http', method } } }
    })
    return {
      resource: tag.resource,
      type: 'http' as const,
      x402Version: 1,
      accepts,
      lastUpdated: iso(updatedAt),
      metadata,
    }
  }

  /** A v2 item: the v2 requirement, the resource's words and service metadata, and its 402's bazaar declaration. */
  const v2Item = ({ tag, updatedAt, metadata }: Listed) =>
    ({
      resource: tag.resource,
      type: 'http' as const,
      x402Version: 2,
      accepts: networks.map((network) => v2Requirement(network, tag)),
      lastUpdated: iso(updatedAt),
      description: tag.description,
      mimeType: tag.mimeType,
      ...serviceMetadata(tag),
      extensions: bazaarExtension(tag) ?? {},
      metadata,
    }) satisfies DiscoveryResource & { metadata: Record<string, unknown> }

  /**
   * A manifest item (the draft's DiscoveryManifestResource): the resource, its requirements (advisory: the live 402
   * decides), how to call it (method and route template; a pass takes an empty JSON body) and what it answers.
   */
  const manifestItem = ({ tag, method }: Listed) => {
    const call = tag.call
    const input = {
      method,
      ...(call && { routeTemplate: call.route }),
      ...(method === 'POST' && { bodyType: 'json', body: { type: 'object' } }),
    }
    const output = call && { mimeType: call.returns.mediaType, ...(call.returns.example && { example: call.returns.example }) }
    return {
      resource: { url: tag.resource, description: tag.description, mimeType: tag.mimeType, ...serviceMetadata(tag) },
      type: 'http' as const,
      accepts: networks.map((network) => v2Requirement(network, tag)),
      input,
      ...(output && { output }),
    }
  }

  return {
    v1List: (items: Listed[], pagination: Pagination) => ({ x402Version: 1, items: items.map(v1Item), pagination }),
    /** The v2 list of `items`, then `tools` (the tools' own items, see mcp-discovery.ts). */
    v2List: (items: Listed[], pagination: Pagination, tools: object[] = []) => ({
      x402Version: 2,
      items: [...items.map(v2Item), ...tools],
      pagination,
    }),
    v2Item,
    /** The manifest of `items` (the first of `total`), made at `now` (Unix seconds). */
    manifest: (items: Listed[], now: number) => ({ x402Version: 2, lastUpdated: now, items: items.map(manifestItem) }),
    /**
     * Which kinds of item a v2 list's filters can match: every http item is exact, on our networks, with a bazaar
     * (payTo is the queries' to match); a tool has a bazaar and accepts no payment, so no payment filter matches it.
     */
    kinds(filters: V2Filters): Kinds {
      if ((filters.extensions ?? 'bazaar') !== 'bazaar') return { http: false, mcp: false }
      const paid =
        (filters.scheme ?? 'exact') === 'exact' &&
        (filters.network === undefined || networks.some((one) => [one.caip2, one.name as string].includes(filters.network!)))
      const unpaid = filters.payTo === undefined && filters.scheme === undefined && filters.network === undefined
      return { http: paid && (filters.type ?? 'http') === 'http', mcp: unpaid && (filters.type ?? 'mcp') === 'mcp' }
    },
    /** The networks a payment may be made on, as v2 names them. */
    networks: chains,
    /**
     * The `x-payment-info` of a paid operation in the OpenAPI document, in the form indexers that read OpenAPI take
     * (Merit-Systems/x402scan docs/DISCOVERY.md: price and protocols), with the networks and the token named. The price
     * is each entry's or pass's own, so it is dynamic (from the least amount to the most a price may be): the 402 says it.
     */
    paymentInfo: () => ({
      price: { mode: 'dynamic', currency: 'USD', min: usdcDecimal(1n), max: usdcDecimal(MAX_AMOUNT) },
      protocols: networks.map((network) => ({ x402: { scheme: 'exact', network: caip2(network), asset: network.usdcAddress } })),
      networks: chains,
      // One field for one token: the first network's USDC (each network's own is in protocols).
      asset: { address: first.usdcAddress, symbol: 'USDC', decimals: 6 },
    }),
  }
}
