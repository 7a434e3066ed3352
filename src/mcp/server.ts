// One MCP server, whatever carries it (stdio in `trellis mcp`, Streamable HTTP at /mcp): the tools over a Trellis
// API. Which tools it lists follows from what it holds: the reading tools always; list_purchases where the server's
// rate limits see its calls (not in process); buying and publishing only with the operator's wallet.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { VERSION } from '../version.ts'
import type { TrellisApi } from './api.ts'
import type { OperatorWallet } from './wallet.ts'
import { registerReadingTools } from './tools/reading.ts'
import { registerBuyingTool, registerPurchasesTool } from './tools/buying.ts'
import { registerPublishingTools } from './tools/publishing.ts'
import { registerAnalyticsTool } from './tools/analytics.ts'
import { OPERATOR_INLINE, SERVER_INLINE } from './content.ts'
import { UNTRUSTED } from './tools/common.ts'

export interface McpServerOptions {
  api: TrellisApi
  wallet: OperatorWallet | null
  /** The API is reached over the network (stdio), not in process (/mcp). */
  remote: boolean
}

/** The tool names each kind of server lists, in order. */
export const READING_TOOLS = ['search_feeds', 'list_categories', 'list_entries', 'get_entry', 'get_price'] as const
export const WALLET_TOOLS = ['buy_entry', 'buy_pass', 'list_purchases', 'create_feed', 'create_entry', 'get_analytics'] as const

const INSTRUCTIONS =
  `Trellis is a marketplace of content feeds: creators publish entries (text, JSON, images, ` +
  `audio, video, PDF), free or paid in USDC over x402.
Find feeds with search_feeds (words, category, tags), list a feed's entries with list_entries, ` +
  `read one with get_entry, and see what a paid entry costs with get_price (and its feed's pass, when one is on sale: ` +
  `every paid entry of the feed for a time).
${UNTRUSTED}`
const WALLET_INSTRUCTIONS =
  `
This server holds the operator's wallet: buy_entry pays for an entry and buy_pass for a feed's pass (within ` +
  `the operator's caps, checked before anything is signed), list_purchases lists what it bought, create_feed and ` +
  `create_entry publish as it, get_analytics tells its sales as a creator. Amounts are USDC smallest units as strings ` +
  `(1000000 = 1 USDC).`

// One for every server: a server makes an Ajv of its own unless given one (a cost per server, and /mcp made a server
// per request), only to check the answers to elicitations, which no tool here asks for. It holds no session's state.
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator()

export function createMcpServer(options: McpServerOptions): McpServer {
  const { api, wallet } = options
  // The operator's own process inlines more than /mcp, which any client may ask.
  const ctx = { api, wallet, inline: options.remote ? OPERATOR_INLINE : SERVER_INLINE }
  const server = new McpServer(
    { name: 'trellis', title: 'Trellis content marketplace', version: VERSION },
    {
      instructions: INSTRUCTIONS + (wallet ? WALLET_INSTRUCTIONS : ''),
      jsonSchemaValidator: SCHEMA_VALIDATOR,
    },
  )
  registerReadingTools(server, ctx)
  if (wallet) registerBuyingTool(server, { ...ctx, wallet })
  if (options.remote) registerPurchasesTool(server, ctx)
  if (wallet) registerPublishingTools(server, { ...ctx, wallet })
  if (wallet) registerAnalyticsTool(server, { ...ctx, wallet })
  return server
}
