// GET /discovery/search, as @x402/extensions 2.27's bazaar client calls it (search({ query, … }) → `${url}/discovery/
// search?query=…`, answered {x402Version, resources, partialResults, pagination: {limit, cursor}}; specs/extensions/
// bazaar.md of the x402 repository): the full-text search of /v1/search, answered as v2 discovery items — a paid entry
// found, as the list lists it; a feed found, by its pass on sale; nothing free. The list's filters apply (payTo in any
// letter case), the cursor continues, a query without words and a forged cursor are refused; the client finds it at
// the origin and under /x402/v2, and an x402 client pays what it found.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PaymentRequirementsV2Schema } from '@x402/core/schemas'
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { bazaarAt, paidJson, payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let [alice, bob]: Wallet[] = []
const url: Record<string, string> = {}

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  ;[alice, bob] = [newWallet(), newWallet()]
  const buoys = await createFeed(server.url, alice!, { name: 'Ocean buoys', description: 'moored sensors' })
  const harbour = await createFeed(server.url, bob!, { name: 'Harbour notes' })
  const week = { price: { amount: '90000', currency: 'USDC' }, duration_s: 604_800 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${buoys.id}/pass`, { wallet: alice, body: week })).status).toBe(200)
  url.pass = `${server.url}/v1/feeds/${buoys.id}/pass/purchases`
  const lisbon = await createEntry(server.url, alice!, buoys.id, paidJson('Tide tables for Lisbon', 20_000))
  url.lisbon = `${server.url}/v1/feeds/${buoys.id}/entries/${lisbon.id}`
  const gauge = await createEntry(server.url, bob!, harbour.id, paidJson('Tide gauge readings', 10_000))
  url.gauge = `${server.url}/v1/feeds/${harbour.id}/entries/${gauge.id}`
  await createEntry(server.url, alice!, buoys.id, { title: 'Tide primer, free' })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const bazaar = (base = `${server.url}/x402/v2`) => bazaarAt(base)

test('the bazaar client searches: paid entries and passes for sale, as the list gives them, nothing free', async () => {
  const found = await bazaar().search({ query: 'tide' })
  expect(found.x402Version).toBe(2)
  expect(found.resources.map((item) => item.resource).sort()).toEqual([url.gauge, url.lisbon].sort())
  expect([found.partialResults, found.pagination]).toEqual([false, { limit: 20, cursor: null }])
  const listed = new Map((await bazaar().listResources({ type: 'http' })).items.map((item) => [item.resource, item]))
  for (const item of found.resources) {
    expect(item).toEqual(listed.get(item.resource)!)
    for (const accepted of item.accepts) expect(PaymentRequirementsV2Schema.safeParse(accepted).success).toBe(true)
    expect(validateDiscoveryExtension(item.extensions!.bazaar as any)).toEqual({ valid: true })
    expect(validateDiscoveryExtensionSpec(item.extensions!.bazaar as any)).toEqual({ valid: true })
  }
  // A feed found is listed by its pass on sale (POST); a feed without one, by nothing.
  const ocean = await bazaar().search({ query: 'ocean buoys' })
  expect(ocean.resources).toEqual([listed.get(url.pass!)!])
  expect((ocean.resources[0]!.extensions!.bazaar as any).info.input.method).toBe('POST')
  expect((await bazaar().search({ query: 'harbour' })).resources).toEqual([])
  // At the origin too, where a client pointed at the server itself asks.
  expect(await bazaar(server.url).search({ query: 'tide' })).toEqual(found)
})

test("the list's filters apply to a search; the cursor continues it", async () => {
  const only = async (params: Record<string, string | undefined>) =>
    (await bazaar().search({ query: 'tide', ...params })).resources.map((item) => item.resource)
  expect(await only({ payTo: bob!.address.toLowerCase() })).toEqual([url.gauge])
  expect(await only({ payTo: `0x${alice!.address.slice(2).toUpperCase()}` })).toEqual([url.lisbon])
  expect(await only({ network: 'eip155:84532', scheme: 'exact', type: 'http', extensions: 'bazaar' })).toHaveLength(2)
  for (const other of [{ network: 'eip155:8453' }, { scheme: 'upto' }, { type: 'mcp' }, { extensions: 'payment-identifier' }])
    expect(await only(other)).toEqual([])
  const first = await bazaar().search({ query: 'tide', limit: 1 })
  expect([first.resources.length, first.partialResults, typeof first.pagination?.cursor]).toEqual([1, true, 'string'])
  const second = await bazaar().search({ query: 'tide', limit: 1, cursor: first.pagination!.cursor! })
  expect(second.resources.length).toBe(1)
  expect([first.resources[0]!.resource, second.resources[0]!.resource].sort()).toEqual([url.gauge, url.lisbon].sort())
  const third = second.pagination?.cursor ? await bazaar().search({ query: 'tide', limit: 1, cursor: second.pagination.cursor }) : null
  expect(third?.resources ?? []).toEqual([])
})

test('a search without words, a malformed payTo or a foreign cursor is refused', async () => {
  for (const path of [
    '/discovery/search',
    '/discovery/search?query=%20%22',
    '/discovery/search?query=tide&payTo=0x12',
    '/discovery/search?query=tide&limit=101',
    '/x402/v2/discovery/search?query=tide&cursor=forged',
  ])
    expectError(await call(server.url, 'GET', path), 400, 'INVALID_PARAMETER')
  // A cursor continues its own search only.
  const { pagination } = await bazaar().search({ query: 'tide', limit: 1 })
  const other = `/discovery/search?query=ocean&limit=1&cursor=${encodeURIComponent(pagination!.cursor!)}`
  expectError(await call(server.url, 'GET', other), 400, 'INVALID_PARAMETER')
})

test('an x402 v2 client pays an entry found by a search', async () => {
  const { resources } = await bazaar().search({ query: 'lisbon' })
  expect(resources.map((item) => item.resource)).toEqual([url.lisbon])
  const read = await payingFetch(await chain.newFundedBuyer(1_000_000n))(resources[0]!.resource)
  expect(read.status).toBe(200)
  expect((await read.json()).title).toBe('Tide tables for Lisbon')
}, 60_000)
