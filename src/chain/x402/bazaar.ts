// x402's bazaar extension: what a 402 declares about its resource so that facilitators and indexers can catalogue
// it (how to call it, what it answers), following specs/extensions/bazaar.md of the x402 repository
// (x402-foundation/x402). The declaration is @x402/extensions' own: declareDiscoveryExtension, then the package's
// resource-server step that adds the method, the route template and the path's parameters. A 402 keeps it with its
// challenge (made once per URL, see resource-server.ts); nothing here runs per request.
import {
  BAZAAR,
  bazaarResourceServerExtension,
  declareDiscoveryExtension,
  sanitizeTags,
  type DiscoveryExtension,
} from '@x402/extensions/bazaar'
import type { PriceTag, ResourceCall } from './requirements.ts'

/** The service name a 402's resource carries (the bazaar's `resource.serviceName`: printable ASCII, at most 32). */
export const SERVICE_NAME = 'Trellis'

/**
 * The bazaar's service metadata for the 402's `resource` of a tag that says how it is called: our name, and the sold
 * thing's tags as the bazaar keeps them.
 */
export function serviceMetadata(tag: PriceTag): { serviceName?: string; tags?: string[] } {
  if (!tag.call) return {}
  const tags = sanitizeTags(tag.call.tags)
  return { serviceName: SERVICE_NAME, ...(tags && { tags }) }
}

/** The route's path parameters as a JSON Schema: every one of ours is an id (a UUID). */
function pathParamsSchema(route: string) {
  const names = [...route.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!)
  return { properties: Object.fromEntries(names.map((name) => [name, { type: 'string', description: 'UUID' }])), required: names }
}

function declared(call: ResourceCall): DiscoveryExtension {
  const output = call.returns.example && { example: call.returns.example }
  const described = { pathParamsSchema: pathParamsSchema(call.route), output }
  // A pass is bought with an empty JSON body; an entry is read with no query.
  const { bazaar } =
    call.method === 'POST' ? declareDiscoveryExtension({ bodyType: 'json', input: {}, ...described }) : declareDiscoveryExtension(described)
  return bazaar!
}

/**
 * The bazaar's output for bytes: their media type as the output's type (the package declares an output only from a
 * JSON example). The schema says so too, so that the info still validates against it.
 */
function withMediaType(extension: DiscoveryExtension, mediaType: string): DiscoveryExtension {
  const schema = extension.schema as unknown as { properties: Record<string, unknown> }
  const output = { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] }
  return {
    ...extension,
    info: { ...extension.info, output: { type: mediaType } },
    schema: {
      ...schema,
      properties: { ...schema.properties, output },
    },
  } as unknown as DiscoveryExtension
}

/** `extensions.bazaar` for the 402 of `tag` (none when the tag says nothing of how it is called). */
export function bazaarExtension(tag: PriceTag): Record<string, DiscoveryExtension> | undefined {
  const call = tag.call
  if (!call) return undefined
  let extension = declared(call)
  if (!call.returns.example) extension = withMediaType(extension, call.returns.mediaType)
  // The package's own enrichment, given what an HTTP framework would: the method, the route, the concrete path.
  const path = new URL(tag.resource).pathname
  const context = { method: call.method, routePattern: call.route, adapter: { getPath: () => path } }
  const enriched = bazaarResourceServerExtension.enrichDeclaration!(extension, context) as DiscoveryExtension
  return { [BAZAAR.key]: enriched }
}
