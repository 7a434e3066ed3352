// The origin's manifest at /.well-known/x402 (and .json), after the x402 draft specs/extensions/well-known-discovery.md:
// each item's resource and requirements checked with @x402/core's schemas, its call (method, route template) and
// answer as its 402's bazaar declaration says; an x402 v2 client pays an entry and a pass found there.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { PaymentRequirementsV2Schema, ResourceInfoSchema } from '@x402/core/schemas'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any
let entry: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Well known', tags: ['maps'] })
  entry = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('<svg xmlns="http://www.w3.org/2000/svg"/>'),
    mime_type: 'image/svg+xml',
    title: 'A map',
    is_free: false,
    price: { amount: '30000', currency: 'USDC' },
  })
  await createEntry(server.url, owner, feed.id, { title: 'Free, not listed' })
  const week = { price: { amount: '40000', currency: 'USDC' }, duration_s: 604_800 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, { wallet: owner, body: week })).status).toBe(200)
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

test('the manifest lists the pass and the entry with their price, network and token, as their 402s do', async () => {
  const known = (await call(server.url, 'GET', '/.well-known/x402')).body
  expect((await call(server.url, 'GET', '/.well-known/x402.json')).body).toEqual(known)
  expect(known).toMatchObject({ x402Version: 2, total: 2, llms: `${server.url}/llms.txt` })
  expect(Math.abs(known.lastUpdated - Date.now() / 1000)).toBeLessThan(60)
  // The things for sale, then the tools of /mcp (the draft's mcp items: free, called by toolName).
  const sale = known.items.filter((item: any) => item.type === 'http')
  expect(known.items.slice(0, 2)).toEqual(sale)
  expect(known.items.slice(2).map((item: any) => item.input.toolName)).toContain('get_price')
  for (const tool of known.items.slice(2)) {
    expect(tool).toMatchObject({ type: 'mcp', accepts: [], resource: { url: `${server.url}/mcp`, serviceName: 'Trellis' } })
    expect([typeof tool.input.toolName, tool.input.transport, tool.input.inputSchema.type]).toEqual(['string', 'streamable-http', 'object'])
  }
  const [pass, sold] = sale
  const entryPath = `/v1/feeds/${feed.id}/entries/${entry.id}`
  expect(pass.input).toEqual({
    method: 'POST',
    routeTemplate: '/v1/feeds/:feed_id/pass/purchases',
    bodyType: 'json',
    body: { type: 'object' },
  })
  expect(sold).toMatchObject({
    resource: { url: `${server.url}${entryPath}`, description: 'A map', mimeType: 'application/json', serviceName: 'Trellis' },
    type: 'http',
    input: { method: 'GET', routeTemplate: '/v1/feeds/:feed_id/entries/:entry_id' },
    output: { mimeType: 'application/json', example: { id: entry.id, feed_id: feed.id, title: 'A map', mime_type: 'image/svg+xml' } },
  })
  for (const item of sale) {
    expect(ResourceInfoSchema.safeParse(item.resource).success).toBe(true)
    for (const accepted of item.accepts) expect(PaymentRequirementsV2Schema.safeParse(accepted).success).toBe(true)
    expect(item.accepts[0]).toMatchObject({ network: 'eip155:84532', asset: known.asset.address, payTo: owner.address })
    const answer = await fetch(item.resource.url, { method: item.input.method })
    const challenge = decodePaymentRequiredHeader(answer.headers.get('payment-required')!)
    expect([answer.status, challenge.accepts, challenge.resource]).toEqual([402, item.accepts, item.resource])
    expect((challenge.extensions!.bazaar as any).routeTemplate).toBe(item.input.routeTemplate)
  }
  expect(sale.map((i: any) => i.accepts[0].amount)).toEqual(['40000', '30000'])
})

test('an x402 v2 client pays what it found in the manifest; made free, it leaves the manifest at once', async () => {
  const items = (await call(server.url, 'GET', '/.well-known/x402')).body.items.filter((item: any) => item.type === 'http')
  const pay = payingFetch(await chain.newFundedBuyer(1_000_000n))
  for (const item of items) {
    const paid = await pay(item.resource.url, { method: item.input.method })
    expect(paid.status).toBe(item.input.method === 'POST' ? 201 : 200)
  }
  // The entry made free: it leaves the manifest.
  const patch = { wallet: owner, body: { is_free: true } }
  expect((await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${entry.id}`, patch)).status).toBe(200)
  const after = (await call(server.url, 'GET', '/.well-known/x402')).body
  expect([after.total, after.items.filter((item: any) => item.type === 'http').length]).toEqual([1, 1])
}, 60_000)
