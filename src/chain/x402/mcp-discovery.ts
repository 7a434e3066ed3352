// The MCP tools of POST /mcp as x402 discovery lists them: items of type "mcp", each declared with @x402/extensions'
// bazaar helper in its MCP form (declareDiscoveryExtension({ toolName, inputSchema, … }): info.input.type "mcp"),
// after specs/extensions/bazaar.md of the x402 repository (x402-foundation/x402 at 5dc34292: "MCP Tools"; a tool is
// the pair of its server's URL and its toolName), and in the manifest as the draft well-known-discovery.md shapes an
// mcp item (input: toolName, inputSchema, transport). No tool of /mcp takes a payment (this server holds no wallet;
// buying is `trellis mcp`'s, which pays, it does not sell), so each item accepts nothing: `accepts` is empty.
import { declareDiscoveryExtension, type DiscoveryResource } from '@x402/extensions/bazaar'
import { SERVICE_NAME } from './bazaar.ts'

/** A tool as MCP's tools/list gives it (the fields read here). */
export interface ListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: Record<string, unknown>
}

/** The transport of /mcp, as the bazaar names it. */
const TRANSPORT = 'streamable-http'
/** What /mcp answers (JSON-RPC, as JSON: it is stateless and streams nothing). */
const MIME_TYPE = 'application/json'

const describe = (tool: ListedTool) => tool.description ?? tool.title ?? tool.name

/** `extensions.bazaar` of a tool: the package's MCP declaration, the tool's own input schema (as tools/list gives it). */
export const toolExtension = (tool: ListedTool) =>
  declareDiscoveryExtension({ toolName: tool.name, description: describe(tool), transport: TRANSPORT, inputSchema: tool.inputSchema })

/** The v2 list's item of a tool of the MCP server at `endpoint`, listed since `updatedAt` (Unix seconds). */
export const mcpItem = (endpoint: string, tool: ListedTool, updatedAt: number) =>
  ({
    resource: endpoint,
    type: 'mcp' as const,
    x402Version: 2,
    accepts: [],
    lastUpdated: new Date(updatedAt * 1000).toISOString(),
    description: describe(tool),
    mimeType: MIME_TYPE,
    serviceName: SERVICE_NAME,
    extensions: toolExtension(tool),
    metadata: { kind: 'mcp_tool', tool_name: tool.name, title: tool.title ?? null, price: 'free' },
  }) satisfies DiscoveryResource & { metadata: Record<string, unknown> }

/** The manifest's item of a tool (the draft's DiscoveryManifestResource, type mcp). */
export const mcpManifestItem = (endpoint: string, tool: ListedTool) => ({
  resource: { url: endpoint, description: describe(tool), mimeType: MIME_TYPE, serviceName: SERVICE_NAME },
  type: 'mcp' as const,
  accepts: [],
  input: { toolName: tool.name, inputSchema: tool.inputSchema, transport: TRANSPORT },
})
