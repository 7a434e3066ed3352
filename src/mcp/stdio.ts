// `trellis mcp`: the MCP server on stdin/stdout for an agent's host (Claude Desktop, an IDE, any MCP client), speaking
// to a Trellis server over HTTP. stdout carries MCP messages only; what this process says goes to stderr. It opens
// no data directory and no store.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { usdcDecimal } from '../lib/money.ts'
import type { McpOptions } from '../config/mcp.ts'
import { trellisApi } from './api.ts'
import { operatorWallet } from './wallet.ts'
import { createMcpServer } from './server.ts'

/** A request to the Trellis server that has not answered in this time fails (a purchase waits for its settlement). */
const REQUEST_TIMEOUT_MS = 90_000

const say = (line: string) => process.stderr.write(`trellis mcp: ${line}\n`)

export async function runStdioMcp(options: McpOptions): Promise<void> {
  const api = trellisApi(options.url, (request) => fetch(request, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }))
  const wallet = options.walletKey ? operatorWallet(options.walletKey, api, options) : null
  const server = createMcpServer({ api, wallet, remote: true })
  const transport = new StdioServerTransport()
  let closing = false
  const close = () => {
    if (closing) return
    closing = true
    server.close().finally(() => process.exit(0))
  }
  // The client closing our stdin ends the session (the SDK's transport does not notice it by itself).
  process.stdin.on('end', close)
  process.on('SIGTERM', close)
  process.on('SIGINT', close)
  await server.connect(transport)
  say(
    `serving ${options.url} over stdio; ${
      wallet
        ? `wallet ${wallet.account.address}, at most ${usdcDecimal(options.maxPerCall)} USDC a purchase ` +
          `and ${usdcDecimal(options.maxPerSession)} USDC in all, paying ` +
          `on ${options.networks?.join(', ') ?? "the server's network as it first names it"}`
        : 'no wallet (TRELLIS_MCP_WALLET_KEY unset): reading tools only'
    }`,
  )
}
