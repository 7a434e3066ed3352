// The feed and entry limits under concurrent creates: a count taken before an insert is only right if no other
// writer inserts between the two, which one embedded writer guarantees and PostgreSQL under READ COMMITTED does not.
// The same test runs on every engine the server can use.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.dispose())

/** Signs every request first, then sends them all at once. */
async function atOnce(
  wallet: Wallet,
  count: number,
  send: (headers: Record<string, string>, i: number) => Promise<{ status: number; body: any }>,
) {
  const headers = await Promise.all(Array.from({ length: count }, () => authHeaders(server.url, wallet)))
  return Promise.all(headers.map((h, i) => send(h, i)))
}

const statuses = (replies: { status: number; body: any }[]) =>
  replies.map((r) => (r.status === 201 ? 201 : `${r.status} ${r.body.code}`)).sort()

test('a wallet with 8 feeds, 3 + 3 creates at once: exactly 2 are made, the rest FEED_LIMIT_REACHED', async () => {
  const owner = newWallet()
  for (let i = 0; i < 8; i++) await createFeed(server.url, owner, { name: `feed ${i}` })
  const replies = await atOnce(owner, 6, (headers, i) => call(server.url, 'POST', '/v1/feeds', { headers, body: { name: `racing ${i}` } }))
  expect(statuses(replies)).toEqual([
    201,
    201,
    '403 FEED_LIMIT_REACHED',
    '403 FEED_LIMIT_REACHED',
    '403 FEED_LIMIT_REACHED',
    '403 FEED_LIMIT_REACHED',
  ])
  const owned = await call(server.url, 'GET', `/v1/feeds?owner_id=${replies.find((r) => r.status === 201)!.body.owner_id}&page_size=100`)
  expect(owned.body.data).toHaveLength(10)
  // Restoring a deleted feed counts as a create.
  const first = owned.body.data[0]
  expect((await call(server.url, 'DELETE', `/v1/feeds/${first.id}`, { wallet: owner })).status).toBe(204)
  const again = await atOnce(owner, 4, (headers, i) =>
    i === 0
      ? call(server.url, 'PATCH', `/v1/feeds/${first.id}`, { headers, body: { is_active: true } })
      : call(server.url, 'POST', '/v1/feeds', { headers, body: { name: `refill ${i}` } }),
  )
  expect(again.filter((r) => r.status === 200 || r.status === 201)).toHaveLength(1)
  expect((await call(server.url, 'GET', `/v1/feeds?owner_id=${first.owner_id}&page_size=100`)).body.data).toHaveLength(10)
})

test('a feed with 998 entries, 2 + 2 creates at once: it ends with exactly 1000, the rest ENTRY_LIMIT_REACHED', async () => {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'nearly full' })
  const headers = await Promise.all(Array.from({ length: 998 }, () => authHeaders(server.url, owner)))
  for (let i = 0; i < headers.length; i += 100) {
    const replies = await Promise.all(
      headers.slice(i, i + 100).map((h, j) =>
        call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
          headers: h,
          body: { content_base64: b64(`entry ${i + j}`), mime_type: 'text/plain' },
        }),
      ),
    )
    expect(replies.every((r) => r.status === 201)).toBe(true)
  }
  const replies = await atOnce(owner, 4, (h, i) =>
    call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
      headers: h,
      body: { content_base64: b64(`racing ${i}`), mime_type: 'text/plain' },
    }),
  )
  expect(statuses(replies)).toEqual([201, 201, '403 ENTRY_LIMIT_REACHED', '403 ENTRY_LIMIT_REACHED'])
  expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body.total_entries).toBe(1000)
})

test(
  'an entry created while its feed is deleted: either refused (409 FEED_INACTIVE) or counted, ' +
    'never an active entry in an inactive feed',
  async () => {
    const owner = newWallet()
    for (let round = 0; round < 5; round++) {
      const feed = await createFeed(server.url, owner, { name: `short-lived ${round}` })
      await createEntry(server.url, owner, feed.id, { content_base64: b64('first'), mime_type: 'text/plain' })
      const [headersCreate, headersDelete] = await Promise.all([authHeaders(server.url, owner), authHeaders(server.url, owner)])
      const [created, deleted] = await Promise.all([
        call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
          headers: headersCreate,
          body: { content_base64: b64(`racing ${round}`), mime_type: 'text/plain' },
        }),
        call(server.url, 'DELETE', `/v1/feeds/${feed.id}`, { headers: headersDelete }),
      ])
      expect(deleted.status).toBe(204)
      expect([201, '409 FEED_INACTIVE']).toContain(created.status === 201 ? 201 : `${created.status} ${created.body.code}`)
      const after = await call(server.url, 'GET', `/v1/feeds/${feed.id}`)
      expect(after.body).toMatchObject({ is_active: false, total_entries: 0 })
      if (created.status === 201)
        expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${created.body.id}`)).body.is_active).toBe(false)
      // Restored, the feed counts every entry it holds.
      expect((await call(server.url, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { is_active: true } })).status).toBe(200)
      expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body.total_entries).toBe(created.status === 201 ? 2 : 1)
    }
  },
)
