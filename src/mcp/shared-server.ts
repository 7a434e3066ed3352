// One MCP server for every tools/call on /mcp, instead of a server and a Streamable HTTP transport per request (the
// SDK's set-up and tear-down cost several times the tool they wrap). A stateless request needs nothing a
// server keeps from one request to the next: its tools are the same for every client, and a tools/call never comes
// after an initialize on the same server here (an initialize is the SDK transport's, on a server of its own), so a
// shared server knows no client's capabilities, exactly as a fresh one would not. The SDK still answers the call:
// its Protocol validates the request, finds the tool, checks its input and shapes the result or the error; this file
// only carries messages to it and back, through the SDK's Transport interface.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js'

type Answer = Exclude<JSONRPCMessage, JSONRPCRequest | { method: string }>

/**
 * Carries requests to a server and its answers back, each under an id of its own: clients choose their ids, and two
 * requests in flight at once may carry the same one (every client's first call is id 1), where the server keys its
 * requests in flight by id.
 */
class InProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void
  private nextId = 0
  private readonly waiting = new Map<number, (answer: Answer) => void>()

  async start() {}

  async close() {
    this.onclose?.()
  }

  /** The server's answer to `request` (a result or an error), with the request's own id. */
  ask(request: JSONRPCRequest, extra: MessageExtraInfo): Promise<Answer> {
    const id = ++this.nextId
    return new Promise((resolve) => {
      this.waiting.set(id, (answer) => resolve({ ...answer, id: request.id }))
      this.onmessage?.({ ...request, id }, extra)
    })
  }

  async send(message: JSONRPCMessage) {
    // Notifications and requests to the client are dropped, as the SDK's transport drops them in JSON-answer mode.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return
    const id = message.id as number
    const resolve = this.waiting.get(id)
    if (!resolve) return
    this.waiting.delete(id)
    resolve(message)
  }
}

/** `ask(request)`: the answer of the server `server()` gives (connected once, and again when it gives another). */
export function sharedServer(server: () => McpServer): (request: JSONRPCRequest, extra: MessageExtraInfo) => Promise<Answer> {
  let connected: { server: McpServer; transport: Promise<InProcessTransport> } | null = null
  return async (request, extra) => {
    const current = server()
    if (connected?.server !== current) {
      const transport = new InProcessTransport()
      connected = { server: current, transport: current.connect(transport).then(() => transport) }
    }
    return (await connected.transport).ask(request, extra)
  }
}
