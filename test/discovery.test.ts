// Agent discovery (x402 v1): /.well-known/x402 names the discovery list; GET /discovery/resources answers as an x402
// facilitator's discovery does, so the x402 package's own client lists what is for sale here, and an x402 client pays
// a listed resource as it is listed. A feed's pass on sale is listed too (before the entries), by its purchase URL.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createWalletClient, http } from 'viem'
import { useFacilitator } from 'x402/verify'
import { ListDiscoveryResourcesResponseSchema } from 'x402/types'
import { wrapFetchWithPayment } from 'x402-fetch'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'

const ADMIN_KEY = 'discovery-admin-key'
let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any
const selling: any[] = []

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_ADMIN_KEY: ADMIN_KEY })
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'For agents', tags: ['data'] })
  const paid = (n: number, extra: Record<string, unknown> = {}) =>
    createEntry(server.url, owner, feed.id, {
      content_base64: b64(`{"n":${n}}`),
      mime_type: 'application/json',
      title: `Dataset ${n}`,
      is_free: false,
      price: { amount: String(10_000 * n), currency: 'USDC' },
      ...extra,
    })
  for (let n = 1; n <= 3; n++) selling.push(await paid(n))
  await createEntry(server.url, owner, feed.id, { title: 'Free sample' })
  const withdrawn = await paid(9)
  expect((await call(server.url, 'DELETE', `/v1/feeds/${feed.id}/entries/${withdrawn.id}`, { wallet: owner })).status).toBe(204)
  selling.reverse() // newest first
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

test('/.well-known/x402 names the network, the token and the discovery list (its items: discovery-well-known)', async () => {
  const known = (await call(server.url, 'GET', '/.well-known/x402')).body
  expect(known).toMatchObject({
    x402Version: 2,
    name: 'Trellis',
    network: 'base-sepolia',
    networks: ['eip155:84532'],
    asset: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', symbol: 'USDC', decimals: 6 },
    discovery: { v1: `${server.url}/discovery/resources`, v2: `${server.url}/x402/v2/discovery/resources` },
    openapi: `${server.url}/openapi.json`,
  })
})

test("the x402 package's discovery client lists exactly what is for sale, each with the requirement its 402 gives", async () => {
  const listed = await useFacilitator({ url: server.url as `${string}://${string}` }).list()
  // The package's schema holds lastUpdated as a Date (its client hands on the JSON as it came: an ISO string).
  for (const item of listed.items)
    expect(new Date(item.lastUpdated as unknown as string).toISOString()).toBe(item.lastUpdated as unknown as string)
  const parsed = ListDiscoveryResourcesResponseSchema.parse({
    ...listed,
    items: listed.items.map((i) => ({ ...i, lastUpdated: new Date(i.lastUpdated) })),
  })
  expect(parsed.pagination).toEqual({ limit: 20, offset: 0, total: 3 })
  expect(parsed.items.map((i) => i.resource)).toEqual(selling.map((e) => `${server.url}/v1/feeds/${feed.id}/entries/${e.id}`))
  for (const [i, item] of parsed.items.entries()) {
    const challenge = await (await fetch(item.resource)).json()
    expect(item.accepts).toEqual(challenge.accepts)
    expect(item.metadata).toMatchObject({
      feed_id: feed.id,
      feed_name: 'For agents',
      entry_id: selling[i].id,
      title: selling[i].title,
      mime_type: 'application/json',
    })
  }
})

test('pages by limit and offset; a bad limit or offset is a 400', async () => {
  const page = (query: string) => call(server.url, 'GET', `/discovery/resources?${query}`)
  const first = (await page('limit=2')).body
  const second = (await page('limit=2&offset=2')).body
  expect([...first.items, ...second.items].map((i: any) => i.metadata.entry_id)).toEqual(selling.map((e) => e.id))
  expect(second.pagination).toEqual({ limit: 2, offset: 2, total: 3 })
  expect((await page('type=mcp')).body.items).toEqual([])
  for (const bad of ['limit=0', 'limit=101', 'limit=x', 'offset=-1', 'offset=2000000'])
    expectError(await page(bad), 400, 'INVALID_PARAMETER')
})

test('an agent pays a listed resource as listed; a price change shows at once', async () => {
  const item = (await call(server.url, 'GET', '/discovery/resources?limit=1')).body.items[0]
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const pay = wrapFetchWithPayment(
    fetch,
    createWalletClient({ account: buyer, chain: chain.chain, transport: http(chain.rpcUrl) }) as never,
  )
  const bought = await pay(item.resource)
  expect(bought.status).toBe(200)
  expect((await bought.json()).content_url).toStartWith(`${server.url}/v1/access/`)

  expect(
    (
      await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${item.metadata.entry_id}`, {
        wallet: owner,
        body: { price: { amount: '15000', currency: 'USDC' } },
      })
    ).status,
  ).toBe(200)
  const again = (await call(server.url, 'GET', '/discovery/resources?limit=1')).body.items[0]
  expect(again.accepts[0].maxAmountRequired).toBe('15000')
  expect(
    (await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${item.metadata.entry_id}`, { wallet: owner, body: { is_free: true } }))
      .status,
  ).toBe(200)
  expect((await call(server.url, 'GET', '/discovery/resources')).body.pagination.total).toBe(2)
}, 60_000)

const PASS_LISTED =
  "a pass on sale is listed first, by its purchase URL (POST) with its 402's requirement, and bought as listed; " +
  'off sale, deleted or taken down, it is gone'
test(PASS_LISTED, async () => {
  const list = (query = '') => call(server.url, 'GET', `/discovery/resources${query}`).then((answer) => answer.body)
  const entriesOnly = await list()
  const entryIds = entriesOnly.items.map((i: any) => i.metadata.entry_id)
  const passFeed = await createFeed(server.url, owner, { name: 'The whole set', tags: ['data'], description: 'Every dataset' })
  const passPath = `/v1/feeds/${passFeed.id}/pass`
  const month = { price: { amount: '50000', currency: 'USDC' }, duration_s: 2_592_000, description: 'A month of data' }
  expect((await call(server.url, 'PUT', passPath, { wallet: owner, body: month })).status).toBe(200)

  const listed = await list()
  expect(listed.pagination).toEqual({ limit: 20, offset: 0, total: entryIds.length + 1 })
  const item = listed.items[0]
  const url = `${server.url}${passPath}/purchases`
  expect(item.resource).toBe(url)
  // The requirement the 402 at that URL gives, and how to call it (x402 v1's outputSchema.input).
  const challenge = await (await fetch(url, { method: 'POST' })).json()
  expect(item.accepts).toEqual([{ ...challenge.accepts[0], outputSchema: { input: { type: 'http', method: 'POST' } } }])
  expect(item.accepts[0]).toMatchObject({
    maxAmountRequired: '50000',
    payTo: owner.address,
    description: 'A 30 days pass to "The whole set": every paid entry, those published later too',
  })
  expect(item.metadata).toEqual({
    kind: 'pass',
    method: 'POST',
    feed_id: passFeed.id,
    feed_name: 'The whole set',
    duration_s: 2_592_000,
    description: 'A month of data',
    tags: ['data'],
    category: null,
  })
  expect(listed.items.slice(1).map((i: any) => [i.metadata.kind, i.metadata.entry_id])).toEqual(entryIds.map((id: string) => ['entry', id]))
  // The pages cut the one list: the pass, then the entries from the first.
  const second = await list('?limit=1&offset=1')
  expect([second.items[0].metadata.entry_id, second.pagination.total]).toEqual([entryIds[0], entryIds.length + 1])
  expect((await list('?limit=1')).items.map((i: any) => i.resource)).toEqual([url])
  // The x402 package's discovery client reads it, in its own schema.
  const read = await useFacilitator({ url: server.url as `${string}://${string}` }).list()
  ListDiscoveryResourcesResponseSchema.parse({ ...read, items: read.items.map((i) => ({ ...i, lastUpdated: new Date(i.lastUpdated) })) })
  expect(read.items[0]!.resource).toBe(url)

  // An x402 client buys the pass as listed: the method it names, the URL, the price.
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const pay = wrapFetchWithPayment(
    fetch,
    createWalletClient({ account: buyer, chain: chain.chain, transport: http(chain.rpcUrl) }) as never,
  )
  const bought = await pay(item.resource, { method: item.metadata.method })
  expect(bought.status).toBe(201)
  expect((await bought.json()).holder).toBe(buyer.address)
  expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - 50_000n)

  // Off sale: gone at once; on sale again: back.
  expect((await call(server.url, 'DELETE', passPath, { wallet: owner })).status).toBe(204)
  const withdrawn = await list()
  expect([withdrawn.pagination.total, withdrawn.items.map((i: any) => i.metadata.kind)]).toEqual([
    entryIds.length,
    entryIds.map(() => 'entry'),
  ])
  expect((await call(server.url, 'PUT', passPath, { wallet: owner, body: month })).status).toBe(200)
  expect((await list()).items[0].resource).toBe(url)
  // The feed deleted: gone (restored, its offer is back); taken down: gone.
  expect((await call(server.url, 'DELETE', `/v1/feeds/${passFeed.id}`, { wallet: owner })).status).toBe(204)
  expect((await list()).pagination.total).toBe(entryIds.length)
  expect((await call(server.url, 'PATCH', `/v1/feeds/${passFeed.id}`, { wallet: owner, body: { is_active: true } })).status).toBe(200)
  expect((await list()).items[0].resource).toBe(url)
  const admin = { 'admin-api-key': ADMIN_KEY }
  expect(
    (await call(server.url, 'POST', `/v1/admin/feeds/${passFeed.id}/takedown`, { headers: admin, body: { reason: 'test' } })).status,
  ).toBe(201)
  const down = await list()
  expect([down.pagination.total, down.items.some((i: any) => i.metadata.kind === 'pass')]).toEqual([entryIds.length, false])
}, 60_000)
