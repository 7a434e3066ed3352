// The v2 list's payTo filter (specs/extensions/bazaar.md, GET /discovery/resources: "Filter by payment recipient
// address"), as @x402/extensions' bazaar client sends it: what that address is paid for — its owner's passes and paid
// entries, in any letter case — paged in the store's queries (two owners' entries interleaved: a page of one owner's
// is whole, its total that owner's), none for an address that sells nothing, a malformed address refused (400 with an
// error string, as the x402 repository's bazaar_discovery_conformance.md asks). An x402 client pays what it found.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { bazaarAt, paidJson, payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let [alice, bob]: Wallet[] = []
const urls: Record<string, string[]> = { alice: [], bob: [] } // newest first

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  ;[alice, bob] = [newWallet(), newWallet()]
  const feeds = { alice: await createFeed(server.url, alice, { name: 'Alice sells' }), bob: await createFeed(server.url, bob) }
  const week = { price: { amount: '70000', currency: 'USDC' }, duration_s: 604_800 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feeds.alice.id}/pass`, { wallet: alice, body: week })).status).toBe(200)
  urls.alice!.push(`${server.url}/v1/feeds/${feeds.alice.id}/pass/purchases`)
  // Interleaved: the market's newest-first order alternates between the two owners.
  for (const n of [1, 2, 3])
    for (const [name, wallet] of [
      ['alice', alice],
      ['bob', bob],
    ] as const) {
      const entry = await createEntry(server.url, wallet!, feeds[name].id, paidJson(`${name} ${n}`, 1000 * n))
      urls[name]!.splice(name === 'alice' ? 1 : 0, 0, `${server.url}/v1/feeds/${feeds[name].id}/entries/${entry.id}`)
    }
  await createEntry(server.url, alice, feeds.alice.id, { title: 'free, not for sale' })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const bazaar = () => bazaarAt(`${server.url}/x402/v2`)

test('payTo lists what that address is paid for, in any letter case, and none of the tools', async () => {
  const all = await bazaar().listResources({ type: 'http' })
  expect(all.pagination.total).toBe(7)
  const lower = alice!.address.toLowerCase()
  const upper = `0x${alice!.address.slice(2).toUpperCase()}`
  for (const payTo of [alice!.address, lower, upper]) {
    const listed = await bazaar().listResources({ payTo })
    expect(listed.pagination).toEqual({ limit: 20, offset: 0, total: 4 })
    expect(listed.items.map((item) => item.resource)).toEqual(urls.alice!)
    for (const item of listed.items) {
      expect(item.type).toBe('http')
      for (const accepted of item.accepts) expect(accepted.payTo.toLowerCase()).toBe(lower)
    }
    // The same items as the whole list gives them.
    const byUrl = new Map(all.items.map((item) => [item.resource, item]))
    for (const item of listed.items) expect(item).toEqual(byUrl.get(item.resource)!)
  }
  const bobs = await bazaar().listResources({ payTo: bob!.address, network: 'eip155:84532', scheme: 'exact' })
  expect([bobs.items.map((item) => item.resource), bobs.pagination.total]).toEqual([urls.bob, 3])
  // With payTo, type=mcp matches nothing (a tool is paid to no one); an address that sells nothing, nothing either.
  const none = { x402Version: 2, items: [], pagination: { limit: 20, offset: 0, total: 0 } }
  expect(await bazaar().listResources({ payTo: alice!.address, type: 'mcp' })).toEqual(none)
  expect(await bazaar().listResources({ payTo: '0x0000000000000000000000000000000000000001' })).toEqual(none)
  expect(await bazaar().listResources({ payTo: newWallet().address })).toEqual(none)
})

test("payTo pages in the store: each page of one owner's list is whole, past the end is empty", async () => {
  const pages: string[] = []
  for (let offset = 0; offset < 4; offset += 3) {
    const page = await bazaar().listResources({ payTo: bob!.address, limit: 3, offset })
    expect(page.pagination).toEqual({ limit: 3, offset, total: 3 })
    pages.push(...page.items.map((item) => item.resource))
  }
  expect(pages).toEqual(urls.bob!)
  const second = await bazaar().listResources({ payTo: alice!.address, limit: 2, offset: 1 })
  expect(second.items.map((item) => item.resource)).toEqual(urls.alice!.slice(1, 3))
  // The v1 list filters the same way (its own item shape).
  const v1 = (await call(server.url, 'GET', `/discovery/resources?payTo=${bob!.address.toLowerCase()}`)).body
  expect([v1.x402Version, v1.items.map((item: any) => item.resource), v1.pagination.total]).toEqual([1, urls.bob, 3])
})

test('a malformed payTo is refused with the error shape of every 400', async () => {
  for (const bad of ['0x12', 'alice', `${alice!.address}00`, '0xZZ00000000000000000000000000000000000000']) {
    const path = `/x402/v2/discovery/resources?payTo=${encodeURIComponent(bad)}`
    const reply = await call(server.url, 'GET', path)
    expectError(reply, 400, 'INVALID_PARAMETER')
    expect(reply.body.error.length).toBeGreaterThan(0)
    expectError(
      await call(server.url, 'GET', `/discovery/resources?x402Version=2&payTo=${encodeURIComponent(bad)}`),
      400,
      'INVALID_PARAMETER',
    )
  }
  await expect(bazaar().listResources({ payTo: 'nobody' })).rejects.toThrow(/400/)
})

test('an x402 v2 client pays an entry found by payTo, and the sale is paid to that address', async () => {
  const { items } = await bazaar().listResources({ payTo: bob!.address, limit: 1 })
  const read = await payingFetch(await chain.newFundedBuyer(1_000_000n))(items[0]!.resource)
  expect(read.status).toBe(200)
  expect((await read.json()).title).toBe('bob 3')
  const sales = (await call(server.url, 'GET', `/v1/transactions?pay_to=${bob!.address}`, { wallet: bob })).body
  expect(sales.data.map((sale: any) => [sale.pay_to.toLowerCase(), sale.amount])).toEqual([[bob!.address.toLowerCase(), '3000']])
}, 60_000)
