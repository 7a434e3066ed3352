// The behaviours a client written for the hosted service relies on (DESIGN §11), exercised the way its
// TypeScript SDK does: every call first WITHOUT auth, signing only after a 401; GET/DELETE with a JSON content type
// and no body; the response fields it reads.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PaymentRequirementsSchema } from 'x402/types'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.dispose())

/** The SDK's request(): unauthenticated first; on 401, fetch a nonce, sign, retry once. */
async function sdkRequest(wallet: Wallet, method: string, path: string, body?: unknown): Promise<Response> {
  const init = (headers: Record<string, string> = {}) => ({
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const first = await fetch(`${server.url}${path}`, init())
  if (first.status !== 401) return first
  return fetch(`${server.url}${path}`, init(await authHeaders(server.url, wallet)))
}

test('lazy auth: protected calls answer 401 first, then succeed signed; reads never ask', async () => {
  const wallet = newWallet()
  const unsigned = await fetch(`${server.url}/v1/feeds`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'x' }),
  })
  expect(unsigned.status).toBe(401)
  const created = await sdkRequest(wallet, 'POST', '/v1/feeds', { name: 'SDK feed', description: 'from the SDK', tags: ['z', 'a'] })
  expect(created.ok).toBe(true)
  const feed = await created.json()
  expect(feed).toMatchObject({ name: 'SDK feed', description: 'from the SDK', tags: ['z', 'a'], owner_wallet_address: wallet.address })
  for (const path of [
    `/v1/feeds/${feed.id}`,
    '/v1/feeds',
    '/v1/categories',
    `/v1/wallets/${feed.owner_id}`,
    '/v1/leaderboards/top-feeds',
    '/v1/transactions',
  ]) {
    const reply = await fetch(`${server.url}${path}`, { headers: { 'Content-Type': 'application/json' } })
    expect(reply.status).toBe(200)
  }
  const deleted = await sdkRequest(wallet, 'DELETE', `/v1/feeds/${feed.id}`)
  expect(deleted.status).toBe(204)
})

test('entries: create echoes title, description, is_free and keeps mime_type as sent; metadata is the JSON text', async () => {
  const wallet = newWallet()
  const feed = await (await sdkRequest(wallet, 'POST', '/v1/feeds', { name: 'f' })).json()
  const body = {
    content_base64: b64('{"hello":1}'),
    mime_type: 'application/json',
    tags: [],
    is_free: true,
    title: 'T',
    description: 'D',
    metadata: JSON.stringify({ source: 'sdk' }),
  }
  const entry = await (await sdkRequest(wallet, 'POST', `/v1/feeds/${feed.id}/entries`, body)).json()
  expect(entry).toMatchObject({ title: 'T', description: 'D', is_free: true, mime_type: 'application/json', metadata: '{"source":"sdk"}' })
  // Paid, as the SDK sends it: is_free false and price {amount, currency, network}.
  const paid = await (
    await sdkRequest(wallet, 'POST', `/v1/feeds/${feed.id}/entries`, {
      ...body,
      is_free: false,
      price: { amount: '25000', currency: 'USDC', network: 'base-sepolia' },
    })
  ).json()
  expect(paid).toMatchObject({ is_free: false, price: '25000' })
  // The 402 body parses with the x402 v1 schema: every required field present, no nulls.
  const challenge = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}`, { headers: { 'Content-Type': 'application/json' } })
  expect(challenge.status).toBe(402)
  const { accepts } = await challenge.json()
  for (const requirement of accepts) expect(PaymentRequirementsSchema.safeParse(requirement).success).toBe(true)
  // Access link: url and expires_at.
  const link = await (await sdkRequest(wallet, 'POST', `/v1/feeds/${feed.id}/entries/${paid.id}/access-link`, {})).json()
  expect(typeof link.url).toBe('string')
  expect(typeof link.expires_at).toBe('number')
})

test('pagination: a string token whenever has_more, null at the end, and total_entries matches the listing', async () => {
  const wallet = newWallet()
  const feed = await (await sdkRequest(wallet, 'POST', '/v1/feeds', { name: 'paged' })).json()
  for (let i = 0; i < 7; i++)
    await sdkRequest(wallet, 'POST', `/v1/feeds/${feed.id}/entries`, {
      content_base64: b64(`e${i}`),
      mime_type: 'text/plain',
      is_free: true,
      tags: [],
    })
  let token: string | undefined
  let seen = 0
  do {
    const params = new URLSearchParams({ page_size: '3' })
    if (token) params.append('page_token', token)
    const page = await (
      await fetch(`${server.url}/v1/feeds/${feed.id}/entries?${params}`, { headers: { 'Content-Type': 'application/json' } })
    ).json()
    expect(page.data.length).toBeGreaterThan(0)
    seen += page.data.length
    if (page.pagination.has_more) expect(typeof page.pagination.next_page_token).toBe('string')
    else expect(page.pagination.next_page_token).toBeNull()
    token = page.pagination.next_page_token || undefined
  } while (token)
  const refreshed = await (await fetch(`${server.url}/v1/feeds/${feed.id}`)).json()
  expect(refreshed.total_entries).toBe(seen)
})

test('wallets, stats, categories and leaderboards have the fields the SDK reads', async () => {
  const wallet = newWallet()
  const feed = await (await sdkRequest(wallet, 'POST', '/v1/feeds', { name: 'w' })).json()
  const byAddress = await (await fetch(`${server.url}/v1/wallets/address/${wallet.address.toLowerCase()}`)).json()
  expect(byAddress).toMatchObject({ id: feed.owner_id, wallet_address: wallet.address })
  const stats = await (await fetch(`${server.url}/v1/wallets/${feed.owner_id}/stats`)).json()
  expect(stats.wallet_id).toBe(feed.owner_id)
  expect(typeof stats.total_feeds_created).toBe('number')
  expect(typeof stats.total_entries_published).toBe('number')
  expect(typeof stats.total_revenue_earned).toBe('string')
  const categories = await (await fetch(`${server.url}/v1/categories?page_size=100`)).json()
  expect(categories.data.length).toBe(7)
  for (const c of categories.data) expect(Object.keys(c)).toEqual(expect.arrayContaining(['id', 'name', 'is_active']))
  for (const board of ['most-popular', 'trending', 'top-revenue', 'top-feeds', 'top-providers', 'category-stats', 'top-buyers']) {
    const reply = await (await fetch(`${server.url}/v1/leaderboards/${board}`)).json()
    expect(Array.isArray(reply.data)).toBe(true)
  }
  const recent = await (await fetch(`${server.url}/v1/leaderboards/recent-entries?page_size=5`)).json()
  expect(recent.pagination).toMatchObject({ page_size: expect.any(Number), has_more: expect.any(Boolean) })
})

test('feed listing the way the SDK asks: repeated tags, owner_wallet_address', async () => {
  const wallet = newWallet()
  const made = []
  for (const tags of [['red'], ['blue'], ['green']]) {
    const feed = await (await sdkRequest(wallet, 'POST', '/v1/feeds', { name: tags[0], tags })).json()
    await sdkRequest(wallet, 'POST', `/v1/feeds/${feed.id}/entries`, {
      content_base64: b64('x'),
      mime_type: 'text/plain',
      is_free: true,
      tags: [],
    })
    made.push(feed)
  }
  const params = new URLSearchParams()
  params.append('owner_wallet_address', wallet.address)
  for (const tag of ['red', 'green']) params.append('tags', tag)
  const listed = await (await fetch(`${server.url}/v1/feeds?${params}`, { headers: { 'Content-Type': 'application/json' } })).json()
  expect(listed.data.map((f: any) => f.name)).toEqual(['green', 'red'])
  const single = await (await fetch(`${server.url}/v1/feeds?owner_wallet_address=${wallet.address}&tags=blue`)).json()
  expect(single.data.map((f: any) => f.id)).toEqual([made[1].id])
})
