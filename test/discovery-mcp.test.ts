// The tools of POST /mcp as x402 discovery lists them: items of type mcp in the v2 list (after the passes and entries)
// and in the manifest, each declared in @x402/extensions' MCP form (declareDiscoveryExtension({ toolName, … }):
// info.input.type "mcp") and valid by the package's checks, with the tool's own input schema as an MCP client's
// tools/list gets it; free (no requirement). An MCP client calls a tool found there, with the arguments its schema asks.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ResourceInfoSchema } from '@x402/core/schemas'
import {
  declareDiscoveryExtension,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
  type McpDiscoveryExtension,
} from '@x402/extensions/bazaar'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { closeClients, httpClient } from './helpers/mcp-client.ts'
import { bazaarAt } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let feed: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  const owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Found by a tool' })
  await createEntry(server.url, owner, feed.id, { title: 'An entry, so that the feed is listed' })
})
afterAll(async () => {
  await closeClients()
  await server?.dispose()
  await chain?.stop()
})

const bazaar = () => bazaarAt(`${server.url}/x402/v2`)

test("the v2 list's mcp items are /mcp's tools, each declared in the package's MCP form and valid", async () => {
  const { tools } = await (await httpClient(server.url)).listTools()
  const listed = await bazaar().listResources({ type: 'mcp' })
  expect(listed.pagination.total).toBe(tools.length)
  expect(listed.items.map((item) => (item.extensions!.bazaar as McpDiscoveryExtension).info.input.toolName)).toEqual(
    tools.map((tool) => tool.name),
  )
  for (const [i, item] of listed.items.entries()) {
    const tool = tools[i]!
    expect(item).toMatchObject({ resource: `${server.url}/mcp`, type: 'mcp', x402Version: 2, accepts: [], serviceName: 'Trellis' })
    const info = { url: item.resource, description: item.description, mimeType: item.mimeType, serviceName: item.serviceName }
    expect(ResourceInfoSchema.safeParse(info).success).toBe(true)
    const extension = item.extensions!.bazaar as McpDiscoveryExtension
    expect(validateDiscoveryExtension(extension)).toEqual({ valid: true })
    expect(validateDiscoveryExtensionSpec(extension as any)).toEqual({ valid: true })
    expect(extension.info.input).toEqual({
      type: 'mcp',
      toolName: tool.name,
      description: tool.description!,
      transport: 'streamable-http',
      inputSchema: tool.inputSchema,
    })
    // Exactly what the package declares for that tool.
    const declared = declareDiscoveryExtension({
      toolName: tool.name,
      description: tool.description!,
      transport: 'streamable-http',
      inputSchema: tool.inputSchema,
    })
    expect(extension).toEqual(declared.bazaar as McpDiscoveryExtension)
  }
  // The same items at the end of the whole list, and in the manifest as the draft's mcp items.
  const all = await bazaar().listResources({ limit: 100 })
  expect(all.items.slice(-tools.length)).toEqual(listed.items)
  const manifest = (await call(server.url, 'GET', '/.well-known/x402')).body
  expect(manifest.items.filter((item: any) => item.type === 'mcp').map((item: any) => item.input)).toEqual(
    tools.map((tool) => ({ toolName: tool.name, inputSchema: tool.inputSchema, transport: 'streamable-http' })),
  )
})

test('an MCP client calls a tool found in the list, at the URL and by the name it gives', async () => {
  const { items } = await bazaar().listResources({ type: 'mcp' })
  const found = items.find((item) => (item.extensions!.bazaar as McpDiscoveryExtension).info.input.toolName === 'search_feeds')!
  const { info } = found.extensions!.bazaar as McpDiscoveryExtension
  expect(Object.keys((info.input.inputSchema as any).properties)).toContain('text')
  const client = await httpClient(new URL(found.resource).origin)
  const answer = await client.callTool({ name: info.input.toolName, arguments: { text: 'Found' } })
  expect(answer.isError).toBeFalsy()
  expect(JSON.stringify(answer.structuredContent ?? answer.content)).toContain(feed.id)
})
