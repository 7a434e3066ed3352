// /mcp answers a tools/call on one shared MCP server (src/mcp/shared-server.ts), not on a server and transport made
// for the request: the same bytes as the SDK's own per-request answer, each caller its own answer when requests in
// flight carry the same id, and no server made per call. The tools reach a real app (in process) through its handler.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { createMcpServer } from '../src/mcp/server.ts'
import { trellisApi } from '../src/mcp/api.ts'
import { statelessMcp } from '../src/mcp/http.ts'
import { MCP_POST_HEADERS, toolCall } from './helpers/mcp-client.ts'

const UNKNOWN = '00000000-0000-4000-8000-000000000000'
let app: InProcessApp
const feeds: Array<{ id: string; name: string }> = []
const entryOf: Record<string, string> = {}

const server = () => createMcpServer({ api: trellisApi(app.url, (request) => app.handle(request)), wallet: null, remote: false })
const request = (message: unknown) =>
  new Request(`${app.url}/mcp`, {
    method: 'POST',
    headers: MCP_POST_HEADERS,
    body: JSON.stringify(message),
  })
const callTool = toolCall

/** An answer with its content fences' boundary set aside: each answer draws a boundary of its own, at random. */
/**
 * An answer with what differs by design from one call to the next: each content fence's random boundary, and the
 * time inside a receipt link's token (its other claims stay, so a link to another entry still differs).
 */
const unfenced = (answer: { status: number; type: string | null; text: string }) => ({
  ...answer,
  text: answer.text
    .replace(/(untrusted content) [A-Za-z0-9_-]+/g, '$1 <boundary>')
    .replace(/\/v1\/access\/([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+/g, (_, __, claims: string) => {
      const { iat: _iat, exp: _exp, ...kept } = JSON.parse(Buffer.from(claims, 'base64url').toString())
      return `/v1/access/<token of ${JSON.stringify(kept).replace(/"/g, "'")}>`
    }),
})

/** The SDK's answer as it gives it with a server and transport of its own (what /mcp did for every call). */
async function sdkAnswer(message: unknown): Promise<{ status: number; type: string | null; text: string }> {
  const mcp = server()
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await mcp.connect(transport)
  try {
    const answer = await transport.handleRequest(request(message))
    return { status: answer.status, type: answer.headers.get('content-type'), text: await answer.text() }
  } finally {
    await mcp.close()
  }
}

/** /mcp's handler with its servers counted: `made` servers in all, of which the shared one. */
function counted() {
  const count = { made: 0 }
  const make = () => (count.made++, server())
  let shared: ReturnType<typeof server> | null = null
  const answer = statelessMcp({ server: make, shared: () => (shared ??= make()), maxBodyBytes: 256 * 1024 })
  return {
    count,
    answer: async (message: unknown) => {
      const response = await answer(request(message))
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
    },
  }
}

beforeAll(async () => {
  app = await startInProcess()
  const owner = newWallet()
  for (const name of ['Alpine weather', 'Harbour tides', 'Desert winds']) {
    const feed = await createFeed(app, owner, { name, tags: ['weather'] })
    const entry = await createEntry(app, owner, feed.id, { content_base64: b64(`${name}: fine`), mime_type: 'text/plain', title: name })
    feeds.push({ id: feed.id, name })
    entryOf[feed.id] = entry.id
  }
}, 60_000)

afterAll(async () => {
  await app?.dispose()
})

describe('/mcp tools/call on one shared server', () => {
  test("every tools/call answer is the SDK's per-request answer, byte for byte, and no server is made per call", async () => {
    const { count, answer } = counted()
    const messages = [
      callTool(1, 'search_feeds', { tags: ['weather'] }),
      callTool('a', 'search_feeds', { text: 'tides', page_size: 1 }),
      callTool(2, 'get_entry', { feed_id: feeds[0]!.id, entry_id: entryOf[feeds[0]!.id]! }),
      callTool(3, 'get_price', { feed_id: feeds[1]!.id, entry_id: UNKNOWN }), // the API's 404: a tool error
      callTool(4, 'get_entry', { feed_id: 'not-a-uuid', entry_id: UNKNOWN }), // refused by the input schema
      callTool(5, 'no_such_tool', {}),
      callTool(6, 'buy_entry', { feed_id: feeds[0]!.id, entry_id: UNKNOWN }), // not offered without a wallet
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }, // no name: the SDK's -32602
    ]
    for (const message of messages) {
      const expected = unfenced(await sdkAnswer(message))
      expect(unfenced(await answer(message))).toEqual(expected)
    }
    expect(count.made).toBe(1)
  })

  test('calls in flight at once with the same id each get their own answer, under their own id', async () => {
    const { count, answer } = counted()
    const answers = await Promise.all(
      feeds.flatMap((feed) =>
        [1, 1, 'x'].map(async (id) => ({
          feed,
          id,
          body: JSON.parse((await answer(callTool(id, 'list_entries', { feed_id: feed.id }))).text),
        })),
      ),
    )
    for (const { feed, id, body } of answers) {
      expect(body.id).toBe(id)
      expect(body.result.structuredContent.entries.map((e: { id: string }) => e.id)).toEqual([entryOf[feed.id]])
    }
    expect(count.made).toBe(1)
  })

  test('anything but a tools/call keeps a server of its own (an initialize tells a server what its client is)', async () => {
    const { count, answer } = counted()
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 't', version: '1' } },
    }
    expect(await answer(init)).toEqual(await sdkAnswer(init))
    expect(await answer({ jsonrpc: '2.0', id: 2, method: 'ping' })).toEqual(await sdkAnswer({ jsonrpc: '2.0', id: 2, method: 'ping' }))
    expect(count.made).toBe(2)
  })
})

describe("/mcp keeps a reading tool's result until the records change", () => {
  const viaRoute = async (message: unknown) => {
    const response = await app.handle(request(message))
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
  }
  const boundaryOf = (text: string) => /untrusted content ([A-Za-z0-9_-]+)/.exec(text)?.[1]

  test("the kept answer is the SDK's with each caller's own id; a write in the records makes it anew", async () => {
    const search = (id: number | string) => callTool(id, 'search_feeds', { tags: ['weather'] })
    const first = await viaRoute(search(1))
    expect(unfenced(first)).toEqual(unfenced(await sdkAnswer(search(1))))
    const again = await viaRoute(search('b'))
    expect(JSON.parse(again.text).id).toBe('b')
    // Kept: the same result (the fences' boundary too, drawn once), under its own id.
    expect(again.text).toBe(first.text.replace(/"id":1}$/, '"id":"b"}'))
    expect(boundaryOf(again.text)).toBe(boundaryOf(first.text))
    // A new feed is a write: the next search is made again and finds it.
    const owner = newWallet()
    const feed = await createFeed(app, owner, { name: 'Coastal fog', tags: ['weather'] })
    await createEntry(app, owner, feed.id) // a feed is listed once it holds an entry
    const after = JSON.parse((await viaRoute(search(3))).text)
    expect(after.result.structuredContent.feeds.map((f: { name: string }) => f.name)).toContain('Coastal fog')
  })
})
