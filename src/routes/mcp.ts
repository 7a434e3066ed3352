// /mcp: the MCP tools for AI agents over Streamable HTTP (the MCP SDK's web-standard transport), stateless: each POST
// gets a server and a transport of its own, answered as JSON, but a tools/call, answered by one shared server, and a
// plain tools/list, answered from the SDK's first answer (src/mcp/http.ts). The tools reach the API through the app's
// own handler (no network hop, the same routes and answers as any client's). This server holds no key: only the tools
// that need none are listed; buying and publishing are `trellis mcp`'s, which holds the operator's wallet.
import { Elysia, t } from 'elysia'
import { createMcpServer, READING_TOOLS } from '../mcp/server.ts'
import { keptAnswers, statelessMcp, type StatelessMcpOptions } from '../mcp/http.ts'
import { trellisApi, type Fetcher } from '../mcp/api.ts'
import { NoBody, errors } from '../edge/openapi.ts'

/** A tool call's arguments are small: a body past this is refused (413) before it is parsed. */
export const MAX_BODY_BYTES = 256 * 1024

const JsonRpcError = t.Object({ code: t.Integer(), message: t.String(), data: t.Optional(t.Unknown()) })
const JsonRpcMessage = t.Object(
  {
    jsonrpc: t.Literal('2.0'),
    id: t.Optional(t.Union([t.String(), t.Number(), t.Null()])),
    result: t.Optional(
      t.Unknown({ description: "the method's result (tools/list: {tools}; tools/call: {content, structuredContent?, isError?})" }),
    ),
    error: t.Optional(JsonRpcError),
  },
  { description: 'a JSON-RPC 2.0 response' },
)
const JsonRpcAnswer = JsonRpcMessage
const JsonRpcRefusal = (description: string) =>
  t.Object({ jsonrpc: t.Literal('2.0'), id: t.Union([t.String(), t.Number(), t.Null()]), error: JsonRpcError }, { description })

const METHOD_NOT_ALLOWED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, POST only (no SSE stream, no session)' },
  id: null,
})
const notAllowed = () => new Response(METHOD_NOT_ALLOWED, { status: 405, headers: { 'content-type': 'application/json', allow: 'POST' } })
const onlyPost = {
  response: { 405: JsonRpcRefusal('this endpoint answers POST only') },
  detail: {
    summary: 'MCP (POST only)',
    description: 'Stateless: no server-sent event stream and no session to end. 405 with Allow: POST.',
  },
}

const DESCRIPTION =
  'The Model Context Protocol server of this marketplace, for AI agents, over Streamable HTTP (stateless, JSON answers; ' +
  'send Accept: application/json, text/event-stream and Content-Type: application/json). Point an MCP client at this URL. ' +
  `Its tools: ${READING_TOOLS.join(', ')} (find feeds by words, category and tags; list categories and a feed's entries; ` +
  "read an entry, a free one's content inline; a paid entry's price and x402 requirements, and its feed's pass). It holds " +
  'no wallet: buy_entry, buy_pass, list_purchases, create_feed and create_entry are offered by `trellis mcp` (stdio), ' +
  "run by the agent's operator with TRELLIS_MCP_WALLET_KEY."

/** `app`: the whole application, whose handler answers the tools' requests (as the docs route reads its routes). */
export const mcpRoutes = (
  app: () => { handle(request: Request): Promise<Response> },
  publicUrl: () => string,
  keep?: StatelessMcpOptions['keep'],
) => {
  const fetcher: Fetcher = (request) => app().handle(request)
  const server = () => createMcpServer({ api: trellisApi(publicUrl(), fetcher), wallet: null, remote: false })
  // The tools' API base is the public URL, known once the server listens: the shared server is made again if it changes.
  let shared: { url: string; server: ReturnType<typeof server> } | null = null
  const answer = statelessMcp({
    server,
    shared: () => (shared?.url === publicUrl() ? shared.server : (shared = { url: publicUrl(), server: server() }).server),
    maxBodyBytes: MAX_BODY_BYTES,
    // This server holds no key: every tool it lists reads the market alone, and is kept until the records change.
    keep,
    keptTools: READING_TOOLS,
  })
  return new Elysia({ tags: ['MCP'] })
    .post('/mcp', ({ request }) => answer(request), {
      parse: 'none', // the MCP handler reads the body itself
      response: {
        200: JsonRpcAnswer,
        202: NoBody('notifications only: accepted'),
        400: JsonRpcRefusal('not JSON, not a JSON-RPC message, or a batch (-32700, -32600): one message per request'),
        406: JsonRpcRefusal('Accept must list application/json and text/event-stream'),
        413: JsonRpcRefusal(`a body over ${MAX_BODY_BYTES} bytes`),
        415: JsonRpcRefusal('Content-Type must be application/json'),
        ...errors(429),
      },
      detail: {
        summary: 'MCP server for AI agents (Streamable HTTP)',
        description: DESCRIPTION,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                description: 'one JSON-RPC 2.0 message (batches are refused): initialize, tools/list, tools/call {name, arguments}, …',
                type: 'object',
                required: ['jsonrpc', 'method'],
                properties: {
                  jsonrpc: { type: 'string', enum: ['2.0'] },
                  id: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
                  method: { type: 'string' },
                  params: { type: 'object' },
                },
              },
            },
          },
        },
      },
    })
    .get('/mcp', notAllowed, onlyPost)
    .delete('/mcp', notAllowed, onlyPost)
}

/** The kept tool answers of POST /mcp, answered from Bun's router before Elysia (edge/serve.ts's `posts`). */
export const mcpKeptAnswers = (peek: (key: string) => string | null | undefined) =>
  keptAnswers({ maxBodyBytes: MAX_BODY_BYTES, peek, keptTools: READING_TOOLS })
