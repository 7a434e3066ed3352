// The MCP tools' inputs tell an agent the API's own limits (issue 36, one source): what `trellis mcp` lists for each
// tool that writes or searches a field is checked against what the server's OpenAPI document says of that field.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { generatePrivateKey } from 'viem/accounts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call } from '../dev/api.ts'
import { SUPPORTED_MIME_TYPES } from '../src/models/entry.ts'
import { MAX_PAGE_SIZE } from '../src/models/common.ts'
import { closeClients, stdioClient } from './helpers/mcp-client.ts'

let server: TestServer
let doc: any
const tools: Record<string, any> = {}

beforeAll(async () => {
  server = await startTestServer()
  doc = (await call(server.url, 'GET', '/v1/openapi.json')).body
  const { client } = await stdioClient(server.url, { TRELLIS_MCP_WALLET_KEY: generatePrivateKey() })
  for (const tool of (await client.listTools()).tools) tools[tool.name] = tool.inputSchema
}, 60_000)

afterAll(async () => {
  await closeClients()
  await server?.dispose()
})

/** The string (or array) member of a documented field, `T | null` read as T (written type: [T, 'null'], or anyOf). */
const member = (field: any, type: string) =>
  [field.type].flat().includes(type) ? field : field.anyOf.find((option: any) => option.type === type)
const lengths = (field: any) => ({ minLength: field.minLength, maxLength: field.maxLength })
const textBounds = (field: any) => lengths(member(field, 'string'))
const listBounds = (field: any) => {
  const list = member(field, 'array')
  return { maxItems: list.maxItems, item: lengths(list.items) }
}
const bodyOf = (name: string) => doc.components.schemas[name].properties

test('create_feed takes a feed as POST /v1/feeds does: the same lengths and tags', () => {
  const api = bodyOf('CreateFeed')
  const tool = tools.create_feed.properties
  for (const field of ['name', 'description']) expect({ field, ...textBounds(tool[field]) }).toEqual({ field, ...textBounds(api[field]) })
  expect(listBounds(tool.tags)).toEqual(listBounds(api.tags))
  expect(textBounds(api.name)).toEqual({ minLength: 1, maxLength: 255 }) // the fields compared are bounded at all
  // The one field the tool holds tighter: a URL or a CID, never an image's bytes in a tool call.
  expect(tool.image_url.maxLength).toBeLessThan(member(api.image_url, 'string').maxLength)
})

test('create_entry offers the types the API accepts, and its words have the same lengths', () => {
  const api = bodyOf('CreateEntry')
  const tool = tools.create_entry.properties
  expect(tool.mime_type.enum).toEqual([...SUPPORTED_MIME_TYPES])
  expect(api.mime_type.description).toBe(`one of ${tool.mime_type.enum.join(', ')}`)
  for (const field of ['title', 'description']) expect({ field, ...textBounds(tool[field]) }).toEqual({ field, ...textBounds(api[field]) })
  expect(listBounds(tool.tags)).toEqual(listBounds(api.tags))
  expect(listBounds(api.tags)).toEqual({ maxItems: 20, item: { minLength: 1, maxLength: 100 } })
})

test('search_feeds and list_categories search and page as the API bounds them', () => {
  const listing = Object.fromEntries(doc.paths['/v1/feeds'].get.parameters.map((parameter: any) => [parameter.name, parameter.schema]))
  expect(tools.search_feeds.properties.text.maxLength).toBe(listing.search.maxLength)
  expect(listing.search.maxLength).toBe(200)
  expect(listBounds(tools.search_feeds.properties.tags)).toEqual(listBounds(bodyOf('CreateFeed').tags))
  expect(tools.list_categories.properties.text.maxLength).toBe(bodyOf('CreateCategory').name.maxLength)
  const search = Object.fromEntries(doc.paths['/v1/search'].get.parameters.map((parameter: any) => [parameter.name, parameter.schema]))
  expect(tools.search_entries.properties.text.maxLength).toBe(search.q.maxLength)
  expect(tools.search_entries.properties.text.minLength).toBe(search.q.minLength)
  for (const name of ['search_feeds', 'search_entries', 'list_categories', 'list_entries'])
    expect(tools[name].properties.page_size.maximum).toBe(MAX_PAGE_SIZE)
  expect(listing.page_size.description).toContain(`1..${MAX_PAGE_SIZE}`)
})
