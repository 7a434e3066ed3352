// Discovery in x402 v2: @x402/extensions' bazaar client, pointed at <origin>/x402/v2 as at a facilitator, lists what
// is for sale (passes first, then paid entries), each item checked with @x402/core's schema of a v2 requirement and
// @x402/extensions' checks of its bazaar declaration, which is the one the 402 at its URL gives; an x402 v2 client
// pays an entry and a pass found there, by the method the declaration names. The v1 list stays as it was (and answers
// v2 when asked with x402Version=2).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { PaymentRequirementsV2Schema, ResourceInfoSchema } from '@x402/core/schemas'
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { bazaarAt, payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any
const entries: any[] = []

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Agents v2', tags: ['data'] })
  for (const n of [1, 2])
    entries.unshift(
      await createEntry(server.url, owner, feed.id, {
        content_base64: b64(`{"n":${n}}`),
        mime_type: 'application/json',
        title: `Set ${n}`,
        is_free: false,
        price: { amount: String(10_000 * n), currency: 'USDC' },
      }),
    )
  const month = { price: { amount: '50000', currency: 'USDC' }, duration_s: 2_592_000 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, { wallet: owner, body: month })).status).toBe(200)
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const bazaarClient = () => bazaarAt(`${server.url}/x402/v2`)
const payer = async () => payingFetch(await chain.newFundedBuyer(1_000_000n))

test('the bazaar client lists passes then entries, each valid and as its 402 declares it', async () => {
  const listed = await bazaarClient().listResources({ type: 'http' })
  expect(listed.x402Version).toBe(2)
  expect(listed.pagination).toEqual({ limit: 20, offset: 0, total: 3 })
  const passUrl = `${server.url}/v1/feeds/${feed.id}/pass/purchases`
  const entryUrl = (e: any) => `${server.url}/v1/feeds/${feed.id}/entries/${e.id}`
  expect(listed.items.map((i) => i.resource)).toEqual([passUrl, ...entries.map(entryUrl)])
  for (const item of listed.items) {
    expect(item).toMatchObject({ type: 'http', x402Version: 2, serviceName: 'Trellis' })
    for (const accepted of item.accepts) expect(PaymentRequirementsV2Schema.safeParse(accepted).success).toBe(true)
    const info = {
      url: item.resource,
      description: item.description,
      mimeType: item.mimeType,
      serviceName: item.serviceName,
      tags: item.tags,
    }
    expect(ResourceInfoSchema.safeParse(info).success).toBe(true)
    const bazaar = item.extensions!.bazaar as any
    expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true })
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true })
    // The 402 at the URL, asked as its declaration says, gives the same requirement and the same declaration.
    const answer = await fetch(item.resource, { method: bazaar.info.input.method })
    expect(answer.status).toBe(402)
    const challenge = decodePaymentRequiredHeader(answer.headers.get('payment-required')!)
    expect(challenge.accepts).toEqual(item.accepts)
    expect(challenge.extensions!.bazaar).toEqual(bazaar)
    expect(challenge.resource).toEqual(info)
  }
  expect((listed.items[0]!.extensions!.bazaar as any).info.input.method).toBe('POST')
  expect(listed.items[1]).toMatchObject({ description: 'Set 2', mimeType: 'application/json', accepts: [{ amount: '20000' }] })
})

test('filters: this network, exact, http and bazaar match; anything else lists nothing; the tools follow', async () => {
  const bazaar = bazaarClient()
  const total = async (params: Record<string, unknown>) => (await bazaar.listResources(params)).pagination.total
  expect(await total({ network: 'eip155:84532', scheme: 'exact', type: 'http', extensions: 'bazaar' })).toBe(3)
  expect(await total({ network: 'eip155:84532' })).toBe(3)
  for (const other of [{ network: 'eip155:8453' }, { scheme: 'upto' }, { type: 'ftp' }, { extensions: 'sign-in-with-x' }])
    expect(await bazaar.listResources(other)).toEqual({ x402Version: 2, items: [], pagination: { limit: 20, offset: 0, total: 0 } })
  // With no filter, the tools of /mcp (type mcp) follow the passes and entries; type=mcp lists them alone.
  const tools = (await bazaar.listResources({ type: 'mcp' })).items
  expect(tools.length).toBeGreaterThan(0)
  const all = await bazaar.listResources()
  expect(all.pagination.total).toBe(3 + tools.length)
  expect(all.items.map((i) => i.type)).toEqual([...Array(3).fill('http'), ...tools.map(() => 'mcp')])
  const page = await bazaar.listResources({ limit: 2, offset: 2 })
  expect([page.items.map((i) => i.type), page.pagination]).toEqual([['http', 'mcp'], { limit: 2, offset: 2, total: 3 + tools.length }])
  expectError(await call(server.url, 'GET', '/x402/v2/discovery/resources?payTo=0x12'), 400, 'INVALID_PARAMETER')
  expectError(await call(server.url, 'GET', '/x402/v2/discovery/resources?limit=101'), 400, 'INVALID_PARAMETER')
  // The v1 list is there for v1 clients, unchanged in shape; a client that can add a query asks it for v2.
  const v1 = (await call(server.url, 'GET', '/discovery/resources')).body
  expect([v1.x402Version, v1.items[1].accepts[0].maxAmountRequired]).toEqual([1, '20000'])
  expect((await call(server.url, 'GET', '/discovery/resources?x402Version=1')).body).toEqual(v1)
  const asked = (await call(server.url, 'GET', '/discovery/resources?x402Version=2&limit=2')).body
  expect(asked).toEqual(await bazaar.listResources({ limit: 2 }))
  expect(asked.x402Version).toBe(2)
  expectError(await call(server.url, 'GET', '/discovery/resources?x402Version=3'), 400, 'INVALID_PARAMETER')
})

test('an x402 v2 client pays an entry and a pass found in the list, by the method declared', async () => {
  const { items } = await bazaarClient().listResources()
  const pay = await payer()
  const [pass, entry] = [items[0]!, items[1]!]
  const method = (item: typeof pass) => (item.extensions!.bazaar as any).info.input.method as string
  const read = await pay(entry.resource, { method: method(entry) })
  expect(read.status).toBe(200)
  expect((await read.json()).title).toBe('Set 2')
  const bought = await pay(pass.resource, { method: method(pass) })
  expect(bought.status).toBe(201)
  expect((await bought.json()).feed_id).toBe(feed.id)
}, 60_000)
