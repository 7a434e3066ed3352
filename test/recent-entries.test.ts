// GET /v1/leaderboards/recent-entries is live: its pages are kept as JSON text until the database next changes, so
// a new entry must show at once, a deleted entry or feed must leave at once, an entry whose early access ends must
// turn free on time without any write, and the hot path must answer exactly what Elysia answers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feedId: string

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_TEST_CLOCK_FILE: testClockFile() })
  owner = newWallet()
  feedId = (await createFeed(server.url, owner, { name: 'recent' })).id
  for (let i = 0; i < 3; i++) await createEntry(server.url, owner, feedId, { title: `first ${i}` })
})

afterAll(async () => {
  await server?.dispose()
})

const recent = async (query = '') => {
  const reply = await call(server.url, 'GET', `/v1/leaderboards/recent-entries${query}`)
  expect(reply.status).toBe(200)
  return reply.body as { data: any[]; pagination: { next_page_token: string | null; has_more: boolean; page_size: number } }
}
const ids = async (query = '') => (await recent(query)).data.map((e) => e.id)

describe('recent-entries', () => {
  test('a new entry shows at once on every page size, also right after the same pages were read', async () => {
    const before = await ids()
    await ids('?page_size=2')
    const added = await createEntry(server.url, owner, feedId, { title: 'newest' })
    expect(await ids()).toEqual([added.id, ...before])
    expect((await ids('?page_size=2'))[0]).toBe(added.id)
  })

  test('a deleted entry leaves at once, and so do the entries of a deleted feed', async () => {
    const [newest, ...rest] = await ids()
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feedId}/entries/${newest}`, { wallet: owner })).status).toBe(204)
    expect(await ids()).toEqual(rest)

    const other = (await createFeed(server.url, owner, { name: 'goes away' })).id
    const doomed = await createEntry(server.url, owner, other, { title: 'in a deleted feed' })
    expect((await ids())[0]).toBe(doomed.id)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${other}`, { wallet: owner })).status).toBe(204)
    expect(await ids()).toEqual(rest)
  })

  test('a page token read before a write gives the page as it is after the write', async () => {
    const first = await recent('?page_size=1')
    const token = first.pagination.next_page_token!
    const page2 = await ids(`?page_size=1&page_token=${encodeURIComponent(token)}`)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feedId}/entries/${page2[0]}`, { wallet: owner })).status).toBe(204)
    const after = await ids(`?page_size=1&page_token=${encodeURIComponent(token)}`)
    expect(after).not.toContain(page2[0])
  })

  test('a paid entry turns free when its early access ends, with no write in between', async () => {
    // An hour of early access, ended by the server's clock moved on, not by waiting: however slow the machine, the
    // page is read (and kept) while the entry is paid, and read again after.
    const paid = await createEntry(server.url, owner, feedId, {
      is_free: false,
      price: { amount: '2500' },
      expires_at: Math.floor(Date.now() / 1000) + 3600,
      title: 'early access',
    })
    const item = async () => (await recent()).data.find((e) => e.id === paid.id)
    expect(await item()).toMatchObject({ is_free: false, price: '2500' })
    await server.moveClock(3660)
    try {
      expect(await item()).toMatchObject({ is_free: true, price: '0' })
    } finally {
      await server.moveClock(0)
    }
  })

  test('the hot path answers exactly what Elysia answers (same text), errors included', async () => {
    const token = (await recent('?page_size=1')).pagination.next_page_token!
    for (const query of ['', '?page_size=2', '?page_size=100', `?page_size=1&page_token=${token}`]) {
      const fast = await fetch(`${server.url}/v1/leaderboards/recent-entries${query}`)
      const slow = await fetch(`${server.url}/v1/leaderboards/recent-entries${query}${query ? '&' : '?'}unrelated=1`)
      expect([fast.status, slow.status], query).toEqual([200, 200])
      expect(fast.headers.get('content-type'), query).toBe(slow.headers.get('content-type'))
      expect(await fast.text(), query).toBe(await slow.text())
    }
    const forged = await call(server.url, 'GET', '/v1/leaderboards/recent-entries?page_token=nope.nope')
    expect([forged.status, forged.body.code]).toEqual([422, 'INVALID_PAGE_TOKEN'])
    expect((await call(server.url, 'GET', '/v1/leaderboards/recent-entries?page_size=0')).body.code).toBe('INVALID_PARAMETER')
  })
})
