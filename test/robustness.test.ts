// Bad input of every kind, at every route: never a 500, never a hang, always a shape-A (or shape-B) error body.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

let server: TestServer
let ids: { feed: string; entry: string; wallet: string; category: string }
beforeAll(async () => {
  server = await startTestServer({ TRELLIS_ADMIN_KEY: 'k' })
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('x') })
  const category = (await call(server.url, 'GET', '/v1/categories')).body.data[0].id
  ids = { feed: feed.id, entry: entry.id, wallet: feed.owner_id, category }
})
afterAll(() => server.dispose())

const ODD_SEGMENTS = [
  '',
  ' ',
  'null',
  'undefined',
  '0',
  '-1',
  '1e309',
  'NaN',
  "'; DROP TABLE feeds;--",
  '%00',
  '%ff%fe',
  '..',
  '%2e%2e%2f',
  'ü𝔘',
  'x'.repeat(5000),
  'tx_',
  '0x',
  '0X' + 'f'.repeat(64),
  '01900000-0000-7000-8000-00000000000G',
]
const ODD_BODIES = [
  '',
  '{',
  'null',
  '[]',
  '"s"',
  '1',
  'true',
  '{"a":' + '['.repeat(2000) + ']'.repeat(2000) + '}',
  JSON.stringify({ name: null, tags: null, content_base64: null, mime_type: null, price: null, username: null }),
  JSON.stringify({ name: { $gt: '' }, tags: [{}], is_active: 'yes', category_id: 12, image_url: 5 }),
  JSON.stringify({ content_base64: 'aGk=', mime_type: 'text/plain', price: { amount: '9'.repeat(400) }, is_free: false }),
  JSON.stringify({ expires_at: 1e308, max_uses: 1e308, description: 'x'.repeat(100_000) }),
  JSON.stringify({ __proto__: { admin: true }, constructor: { prototype: {} } }),
]

function routes(): [string, string][] {
  const { feed, entry, wallet, category } = ids
  return [
    ['POST', '/v1/auth/nonce'],
    ['POST', '/v1/feeds'],
    ['GET', '/v1/feeds'],
    ['GET', `/v1/feeds/${feed}`],
    ['PATCH', `/v1/feeds/${feed}`],
    ['DELETE', '/v1/feeds/SEG'],
    ['GET', '/v1/feeds/SEG'],
    ['POST', `/v1/feeds/${feed}/entries`],
    ['GET', `/v1/feeds/${feed}/entries`],
    ['GET', `/v1/feeds/SEG/entries/${entry}`],
    ['GET', `/v1/feeds/${feed}/entries/SEG`],
    ['GET', `/v1/feeds/${feed}/entries/SEG/content`],
    ['DELETE', `/v1/feeds/${feed}/entries/SEG`],
    ['POST', `/v1/feeds/${feed}/entries/${entry}/access-link`],
    ['GET', `/v1/feeds/${feed}/entries/${entry}/access-links`],
    ['DELETE', '/v1/access-links/SEG'],
    ['GET', '/v1/access/SEG'],
    ['GET', '/v1/transactions'],
    ['GET', '/v1/transactions/SEG'],
    ['GET', '/v1/transactions/hash/SEG'],
    ['GET', '/v1/wallets/SEG'],
    ['GET', '/v1/wallets/address/SEG'],
    ['GET', '/v1/wallets/SEG/stats'],
    ['PATCH', `/v1/wallets/${wallet}`],
    ['GET', '/v1/categories'],
    ['GET', '/v1/categories/SEG'],
    ['POST', '/v1/categories'],
    ['PATCH', `/v1/categories/${category}`],
    ['GET', '/v1/leaderboards/most-popular'],
    ['GET', '/v1/leaderboards/recent-entries'],
    ['GET', '/v1/leaderboards/category-stats'],
  ]
}

const QUERIES = [
  '',
  '?page_size=1e3',
  '?page_size=-5&page_token=%00',
  '?period=%F0%9F%98%80',
  '?payer=0x&pay_to=&entry_id=1',
  '?tags=' + ','.repeat(500),
  '?min_entries=99999999999999999999',
  '?is_active=&is_free=2',
  '?page_token=' + 'A'.repeat(3000) + '.' + 'B'.repeat(22),
]

test('no 500 anywhere, and every error body is JSON with a code', async () => {
  const failures: string[] = []
  const owner = newWallet()
  let checked = 0
  for (const [method, template] of routes()) {
    const cases: { path: string; body?: string; headers?: Record<string, string> }[] = []
    for (const seg of template.includes('SEG') ? ODD_SEGMENTS : ['']) {
      const path = template.replace('SEG', encodeURIComponent(seg).replace(/%25/g, '%'))
      for (const q of method === 'GET' ? QUERIES : ['']) cases.push({ path: path + q })
      if (method !== 'GET') for (const body of ODD_BODIES) cases.push({ path, body })
    }
    // Signed variants for protected routes, and garbage auth headers.
    if (method !== 'GET') {
      for (const body of ODD_BODIES)
        cases.push({ path: template.replace('SEG', ids.entry), body, headers: await authHeaders(server.url, owner) })
      cases.push({
        path: template.replace('SEG', ids.entry),
        headers: {
          'x-wallet-address': '0x' + 'z'.repeat(40),
          'x-signature': '0x',
          'x-message': '%%%',
          'x-timestamp': '-1',
          'x-chain-id': 'abc\u0001'.slice(0, 3),
          'admin-api-key': '',
        },
      })
    }
    const replies = await Promise.all(
      cases.map(async (c) => {
        const response = await fetch(`${server.url}${c.path}`, {
          method,
          body: c.body,
          headers: { 'content-type': 'application/json', ...(c.headers ?? {}) },
          signal: AbortSignal.timeout(10_000),
        })
        return { c, status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() }
      }),
    )
    for (const { c, status, type, text } of replies) {
      checked++
      const label = `${method} ${c.path.slice(0, 120)} ${c.body?.slice(0, 60) ?? ''}`
      if (status >= 500) failures.push(`${status} ${label}: ${text.slice(0, 200)}`)
      if (status >= 400 && status !== 402) {
        if (!type.includes('application/json')) failures.push(`${status} non-JSON error ${label}`)
        else {
          const body = JSON.parse(text)
          if (typeof body.error !== 'string' || (typeof body.code !== 'string' && body.error !== 'invalid_request'))
            failures.push(`${status} bad error body ${label}: ${text.slice(0, 200)}`)
        }
      }
    }
  }
  expect(failures).toEqual([])
  expect(checked).toBeGreaterThan(500)
  expect(server.logs.filter((l) => l.includes('unhandled error'))).toEqual([])
  // And the data is intact.
  expect((await call(server.url, 'GET', `/v1/feeds/${ids.feed}`)).body.total_entries).toBe(1)
}, 120_000)
