// MCP over Streamable HTTP, stateless, with JSON answers (/mcp): the MCP SDK's web-standard transport answers every
// request, on a server and a transport of its own (the SDK refuses to reuse a stateless transport, and a server keeps
// what a client's initialize told it), but two. A tools/call, once the checks the transport would make pass, is
// answered by one shared server (shared-server.ts): the same answer, without a server's set-up per call. A plain
// tools/list, the request asked most, has an answer that never changes on a keyless server, and the SDK rebuilds it
// from the zod schemas each time (the most costly request here): its result is asked of the SDK once, and each later
// plain tools/list gets that text with its own id, the bytes, status and headers the SDK gives. Anything else, or
// anything unlike the fast path expects, goes to the SDK whole.
// A JSON-RPC batch is refused (MCP 2025-06-18 dropped them): one request is one message, so the rate limit, which
// counts requests, counts every tool call, and no request can ask for a hundred answers at once.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js'
import {
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { nowSeconds } from '../lib/clock.ts'
import { sharedServer } from './shared-server.ts'

export interface StatelessMcpOptions {
  /** A new server for one request: the same tools for every request (the cached tools/list is one of its answers). */
  server: () => McpServer
  /** The server every tools/call goes to: the same one while nothing it was made of changes (its tools, as `server`'s). */
  shared: () => McpServer
  /** A body past this is refused (413), as the SDK's `maxRequestBodySize`. */
  maxBodyBytes: number
  /**
   * Keeps a reading tool's result until the records next change (the read memo's `get`): `made` says from when it
   * is stale by the clock (server seconds). Without it every call is made.
   */
  keep?: (
    key: string,
    make: (staleFrom: (at: number) => void) => Promise<string | null>,
    size: (text: string | null) => number,
  ) => Promise<string | null>
  /** The tools whose result is a function of their arguments and the market (no wallet, no caller's headers). */
  keptTools?: readonly string[]
}

/**
 * How long a kept result may outlive the clock's part in it (an early access ending makes an entry free with no
 * write until the expiry job runs): every write in the records drops it at once, the clock within a second.
 */
const KEPT_CLOCK_S = 1

/** The SDK's own answer to a JSON-RPC message: `{"result":…,"jsonrpc":"2.0","id":…}` (its key order, checked below). */
const RESULT_HEAD = '{"result":'
const resultTail = (id: string | number) => `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
const ACCEPT = 'application/json, text/event-stream'
const ASK_TOOLS = '{"jsonrpc":"2.0","id":0,"method":"tools/list"}'
const BATCH_REFUSED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not accepted here; send one message per request' },
  id: null,
})

/** The message is tools/list and nothing more (no cursor, no _meta, nothing the SDK might answer otherwise). */
function plainToolsList(message: unknown): message is { id: string | number } {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false
  const { jsonrpc, id, method, params, ...rest } = message as Record<string, unknown>
  return (
    jsonrpc === '2.0' &&
    method === 'tools/list' &&
    Object.keys(rest).length === 0 &&
    // The SDK's id: a string, or an integer it can hold (others are its 400).
    (typeof id === 'string' || Number.isSafeInteger(id)) &&
    (params === undefined ? !('params' in message) : isEmptyObject(params))
  )
}
const isToolCall = (message: unknown) =>
  typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'tools/call'
const isEmptyObject = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0

/**
 * The body as the SDK reads it: `over` once more than `limit` bytes came (then `chunks` holds those, no more is read).
 * The bytes are kept so that a body the fast path does not take can be handed to the SDK to read in its turn.
 */
async function readBody(body: ReadableStream<Uint8Array>, limit: number): Promise<{ chunks: Uint8Array[]; over: boolean }> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let received = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { chunks, over: false }
      chunks.push(value)
      received += value.byteLength
      if (received > limit) return { chunks, over: true }
    }
  } finally {
    reader.releaseLock()
  }
}

/** A tools/call as the key of its kept result: its tool and arguments, or null when it is not kept. */
function keptKey(request: JSONRPCRequest, tools: readonly string[]): string | null {
  const { name, arguments: args, ...rest } = (request.params ?? {}) as Record<string, unknown>
  return typeof name === 'string' && tools.includes(name) && Object.keys(rest).length === 0
    ? `mcp:${name}:${JSON.stringify(args ?? null)}`
    : null
}

/**
 * A tools/call of nothing but its name and arguments, with an id the SDK takes: its kept result's key. Such a message
 * has passed the SDK's schema before whenever a result is kept under that key (the same arguments, as JSON text).
 */
function plainToolCall(message: unknown, tools: readonly string[]): { id: string | number; key: string } | null {
  if (typeof message !== 'object' || message === null) return null
  const { jsonrpc, id, method, params, ...rest } = message as Record<string, unknown>
  if (jsonrpc !== '2.0' || method !== 'tools/call' || Object.keys(rest).length > 0) return null
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null
  const key = typeof params === 'object' && params !== null ? keptKey({ jsonrpc, id, method, params } as JSONRPCRequest, tools) : null
  return key ? { id: id as string | number, key } : null
}

/**
 * What the SDK checks before the body, in its order (406, 415, 413 by the declared length), and the protocol version
 * it checks after: false when the fast path would not answer as it does (the SDK answers, body unread).
 */
function sdkWouldRead(request: Request, maxBodyBytes: number): boolean {
  const accept = request.headers.get('accept')
  const version = request.headers.get('mcp-protocol-version')
  return (
    request.method === 'POST' &&
    accept?.includes('application/json') === true &&
    accept.includes('text/event-stream') &&
    isJsonContentType(request.headers.get('content-type')) &&
    !(Number(request.headers.get('content-length')) > maxBodyBytes) &&
    (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  )
}

const keptAnswer = (result: string, id: string | number) =>
  new Response(RESULT_HEAD + result + resultTail(id), { status: 200, headers: { 'Content-Type': 'application/json' } })

/**
 * The kept answers alone, for Bun's router before the web framework: a plain tools/call whose result is kept is
 * answered; anything else is handed back as the request for /mcp's route (its body given again once read). Only a
 * body whose length is declared and within the limit is read here.
 */
export function keptAnswers({
  maxBodyBytes,
  peek,
  keptTools,
}: {
  maxBodyBytes: number
  /** What `keep` holds for a key now, without making it: undefined when nothing is held. */
  peek: (key: string) => string | null | undefined
  keptTools: readonly string[]
}) {
  // A kept answer is given as its JSON text, for the wrapper to answer 200 with its made-once JSON headers.
  return async (request: Request): Promise<string | Request> => {
    if (!sdkWouldRead(request, maxBodyBytes) || !request.headers.has('content-length') || request.body === null) return request
    const bytes = new Uint8Array(await request.arrayBuffer())
    let plain: ReturnType<typeof plainToolCall> = null
    try {
      plain = plainToolCall(JSON.parse(new TextDecoder().decode(bytes)), keptTools)
    } catch {}
    const held = plain && peek(plain.key)
    return plain && held
      ? RESULT_HEAD + held + resultTail(plain.id)
      : new Request(request.url, { method: 'POST', headers: request.headers, body: bytes })
  }
}

export function statelessMcp({
  server,
  shared,
  maxBodyBytes,
  keep,
  keptTools = [],
}: StatelessMcpOptions): (request: Request) => Promise<Response> {
  async function sdk(request: Request, parsedBody?: unknown): Promise<Response> {
    const mcp = server()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: maxBodyBytes,
    })
    await mcp.connect(transport)
    try {
      // JSON mode: the answer is whole when it resolves. A parsed body is not read again (its size was checked).
      return await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody })
    } finally {
      await mcp.close()
    }
  }

  const call = sharedServer(shared)

  let toolsList: Promise<string | null> | undefined
  /** The SDK's tools/list result as JSON text, asked once; null (never the fast path) if its answer is not as expected. */
  const cachedToolsList = () =>
    (toolsList ??= (async () => {
      const answer = await sdk(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: { accept: ACCEPT, 'content-type': 'application/json' },
          body: ASK_TOOLS,
        }),
      )
      const text = await answer.text()
      const tail = resultTail(0)
      let headers = 0
      answer.headers.forEach(() => void headers++)
      const plain = answer.status === 200 && headers === 1 && answer.headers.get('content-type') === 'application/json'
      return plain && text.startsWith(RESULT_HEAD) && text.endsWith(tail) ? text.slice(RESULT_HEAD.length, -tail.length) : null
    })().catch(() => null))

  return async (request) => {
    // What the SDK checks before the body, in its order (406, 415, 413 by the declared length), and the protocol
    // version it checks after: anything the fast path would not answer as it does is left to it, body unread.
    if (!sdkWouldRead(request, maxBodyBytes) || request.body === null) return sdk(request)
    const { chunks, over } = await readBody(request.body, maxBodyBytes)
    const bytes = Buffer.concat(chunks)
    let message: unknown
    try {
      if (over) throw new Error('over the limit')
      message = JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      // Too large, or not JSON: the SDK reads the same bytes and refuses them (413, 400) in its own words.
      return sdk(new Request(request.url, { method: 'POST', headers: request.headers, body: bytes }))
    }
    if (Array.isArray(message)) return new Response(BATCH_REFUSED, { status: 400, headers: { 'Content-Type': 'application/json' } })
    if (plainToolsList(message)) {
      const result = await cachedToolsList()
      if (result !== null)
        return new Response(RESULT_HEAD + result + resultTail(message.id), { status: 200, headers: { 'Content-Type': 'application/json' } })
    }
    if (isToolCall(message)) {
      // What the SDK's transport hands its server: the message as its schema reads it, and the request's headers and URL.
      const checked = JSONRPCMessageSchema.safeParse(message)
      if (checked.success && isJSONRPCRequest(checked.data)) {
        const headers: Record<string, string> = {}
        request.headers.forEach((value, name) => void (headers[name] = value))
        const extra = { requestInfo: { headers, url: new URL(request.url) } }
        const key = keep && keptKey(checked.data, keptTools)
        if (key) {
          const asked: JSONRPCRequest = { ...checked.data, id: 0 }
          // The result as the SDK wrote it for id 0, kept unless it is an error (a failure may pass); each caller gets
          // it with its own id, the same bytes as the SDK's answer.
          const result = await keep(
            key,
            async (staleFrom) => {
              staleFrom(nowSeconds() + KEPT_CLOCK_S)
              const text = JSON.stringify(await call(asked, extra))
              const tail = resultTail(0)
              const plain = text.startsWith(RESULT_HEAD) && text.endsWith(tail) && !text.includes('"isError":true')
              return plain ? text.slice(RESULT_HEAD.length, -tail.length) : null
            },
            (text) => 64 + (text?.length ?? 0),
          )
          if (result !== null) return keptAnswer(result, checked.data.id)
        }
        const answer = await call(checked.data, extra)
        return new Response(JSON.stringify(answer), { status: 200, headers: { 'Content-Type': 'application/json' } })
      }
    }
    return sdk(request, message)
  }
}
