// The tools POST /mcp lists, as its tools/list answers any client (name, title, description, inputSchema): x402
// discovery lists each as a bazaar item of type mcp (chain/x402/mcp-discovery.ts). Asked once, in process, of a server
// made as /mcp makes its own (no wallet, not remote): the list is the same for every client and every request.
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { createMcpServer } from './server.ts'
import { sharedServer } from './shared-server.ts'
import { trellisApi } from './api.ts'

let listed: Promise<Tool[]> | null = null

/** The tools of /mcp, in the order its tools/list gives them. */
export function mcpTools(): Promise<Tool[]> {
  listed ??= (async () => {
    // Listing the tools calls no API: the server is given one that answers nothing.
    const api = trellisApi('http://127.0.0.1', () => Promise.reject(new Error('tools/list reads no API')))
    const server = createMcpServer({ api, wallet: null, remote: false })
    const answer = await sharedServer(() => server)({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {})
    if (!('result' in answer)) throw new Error(`tools/list failed: ${JSON.stringify(answer)}`)
    return (answer.result as { tools: Tool[] }).tools
  })()
  return listed
}
