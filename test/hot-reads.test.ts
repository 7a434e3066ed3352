// The hot-read path (src/edge/hot-reads.ts) answers plain requests from Bun's router; anything else goes to Elysia.
// Both must give the same answer: each hot URL is compared with the same URL plus an unknown query parameter, which
// the hot path declines. Also: CORS on both paths, invalid queries still answered by Elysia's errors, HEAD.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, challengeOf, createEntry, createFeed, newWallet } from '../dev/api.ts'

let server: TestServer
let feedId: string
let walletId: string
let paidPaths: string[]
let freeContent: { small: string; large: string; html: string }
/** A cursor of the feed list (the feed after which the list goes on: none here, an empty page). */
let listCursor: string

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_STATS_REFRESH_S: '1', TRELLIS_RANKINGS_REFRESH_S: '1' })
  const owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'hot', tags: ['a'] })
  for (let i = 0; i < 3; i++) await createEntry(server.url, owner, feed.id)
  const paid = await createEntry(server.url, owner, feed.id, { is_free: false, price: { amount: '2500' }, title: 'paid one' })
  paidPaths = [`/v1/feeds/${feed.id}/entries/${paid.id}`, `/v1/feeds/${feed.id}/entries/${paid.id}/content`]
  const small = await createEntry(server.url, owner, feed.id, { content_base64: b64('Sunny above 2000 m.\n'), mime_type: 'text/plain' })
  const large = await createEntry(server.url, owner, feed.id, { content_base64: b64(Buffer.alloc(100_000, 'w')), mime_type: 'text/plain' })
  const html = await createEntry(server.url, owner, feed.id, { content_base64: b64('<p>hi</p>'), mime_type: 'text/html' })
  freeContent = Object.fromEntries(
    Object.entries({ small, large, html }).map(([name, e]) => [name, `/v1/feeds/${feed.id}/entries/${e.id}/content`]),
  ) as typeof freeContent
  feedId = feed.id
  walletId = feed.owner_id
  // A second feed, empty (hidden from the market-wide list), then its owner's listing gives a cursor of the list.
  await createFeed(server.url, owner, { name: 'empty' })
  listCursor = (await call(server.url, 'GET', `/v1/feeds?owner_id=${walletId}&page_size=1`)).body.pagination.next_page_token
  for (let i = 0; i < 50; i++) {
    if ((await call(server.url, 'GET', '/v1/leaderboards/top-feeds')).body.data.length > 0) break
    await Bun.sleep(100)
  }
})

afterAll(async () => {
  await server?.dispose()
})

const hot = () => [
  '/v1/leaderboards/top-feeds',
  '/v1/leaderboards/top-feeds?page_size=1',
  '/v1/leaderboards/trending',
  '/v1/leaderboards/most-popular',
  '/v1/leaderboards/top-revenue?period=7d',
  '/v1/leaderboards/top-providers?period=1d&page_size=5',
  '/v1/leaderboards/top-buyers?page_size=100&period=30d',
  '/v1/leaderboards/category-stats',
  `/v1/feeds/${feedId}`,
  `/v1/feeds/${feedId.toUpperCase()}`,
  `/v1/wallets/${walletId}/stats`,
  '/v1/feeds',
  '/v1/feeds?page_size=100',
  '/v1/feeds?page_size=1&page_token=',
  `/v1/feeds?page_size=100&page_token=${listCursor}`,
]

describe('hot reads', () => {
  test('the same status, type and body as Elysia gives for the same request', async () => {
    expect((await call(server.url, 'GET', '/v1/leaderboards/top-feeds')).body.data.map((f: any) => f.id)).toEqual([feedId])
    for (const path of hot()) {
      // Statistics are rebuilt every second here: one that lands between the two requests changes generated_at, so a
      // pair that differs is asked again (a real difference differs every time).
      for (let attempt = 1; ; attempt++) {
        const fast = await fetch(`${server.url}${path}`)
        const slow = await fetch(`${server.url}${path}${path.includes('?') ? '&' : '?'}unrelated=1`)
        expect(fast.status, path).toBe(200)
        expect(slow.status, path).toBe(200)
        expect(fast.headers.get('content-type'), path).toBe(slow.headers.get('content-type'))
        const [fastBody, slowBody] = [await fast.text(), await slow.text()]
        if (fastBody === slowBody || attempt === 3) {
          expect(fastBody, path).toBe(slowBody)
          break
        }
      }
    }
  })

  test('the 402 challenge of a paid entry is the same on both paths', async () => {
    for (const path of paidPaths) {
      const fast = await fetch(`${server.url}${path}`)
      const slow = await fetch(`${server.url}${path}?unrelated=1`)
      expect([fast.status, slow.status], path).toEqual([402, 402])
      expect(challengeOf(fast.headers.get('payment-required')), path).toEqual(challengeOf(slow.headers.get('payment-required')))
      // Each 402 draws its own sign-in-with-x nonce.
      const nonceOf = (r: Response) => JSON.parse(atob(r.headers.get('payment-required')!)).extensions['sign-in-with-x'].info.nonce
      expect(nonceOf(fast), path).not.toBe(nonceOf(slow))
      expect(fast.headers.get('content-type'), path).toBe(slow.headers.get('content-type'))
      const body = await fast.text()
      expect(body, path).toBe(await slow.text())
      expect(JSON.parse(body).accepts[0].maxAmountRequired).toBe('2500')
    }
    // With a payment or a signature the request is Elysia's: a garbage payment is refused there, with its reason.
    const refused = await fetch(`${server.url}${paidPaths[1]}`, { headers: { 'x-payment': 'not-base64-json' } })
    expect(refused.status).toBe(402)
    expect((await refused.json()).error).not.toBe('X-PAYMENT header is required')
    const partial = await fetch(`${server.url}${paidPaths[0]}`, {
      headers: { 'x-wallet-address': '0x0000000000000000000000000000000000000001' },
    })
    expect(partial.status).toBe(400)
  })

  test(
    "a free entry's content: the same status, headers and bytes on both paths; conditional and " + 'partial requests answered as before',
    async () => {
      const headersOf = (reply: Response) => {
        const all: string[][] = []
        reply.headers.forEach((value, name) => void (name !== 'x-request-id' && name !== 'date' && all.push([name, value])))
        return all.sort()
      }
      for (const path of Object.values(freeContent)) {
        for (let i = 0; i < 3; i++) await (await fetch(`${server.url}${path}`)).arrayBuffer() // prepared by now
        const fast = await fetch(`${server.url}${path}`)
        const slow = await fetch(`${server.url}${path}?unrelated=1`)
        expect([fast.status, slow.status], path).toEqual([200, 200])
        expect(headersOf(fast), path).toEqual(headersOf(slow))
        expect(Buffer.from(await fast.arrayBuffer()).equals(Buffer.from(await slow.arrayBuffer())), path).toBe(true)
        const etag = fast.headers.get('etag')!
        expect((await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag } })).status, path).toBe(304)
        const part = await fetch(`${server.url}${path}`, { headers: { range: 'bytes=0-4' } })
        expect([part.status, part.headers.get('content-range')?.startsWith('bytes 0-4/'), (await part.text()).length], path).toEqual([
          206,
          true,
          5,
        ])
        const head = await fetch(`${server.url}${path}`, { method: 'HEAD' })
        expect([head.status, head.headers.get('content-length'), await head.text()], path).toEqual([
          200,
          fast.headers.get('content-length'),
          '',
        ])
      }
      const small = await fetch(`${server.url}${freeContent.small}`)
      expect([small.headers.get('content-type'), small.headers.get('cache-control'), await small.text()]).toEqual([
        'text/plain; charset=utf-8',
        'public, max-age=300',
        'Sunny above 2000 m.\n',
      ])
      expect((await fetch(`${server.url}${freeContent.html}`)).headers.get('content-security-policy')).toBe('sandbox')
    },
  )

  test('an encoded query is left to Elysia, which decodes it', async () => {
    const encoded = await fetch(`${server.url}/v1/leaderboards/top-revenue?period=7%64&page_size=2`)
    const plain = await fetch(`${server.url}/v1/leaderboards/top-revenue?period=7d&page_size=2`)
    expect(encoded.status).toBe(200)
    expect(await encoded.text()).toBe(await plain.text())
  })

  test('invalid queries and ids get the documented errors', async () => {
    for (const query of [
      'period=constructor',
      'period=toString',
      'period=',
      'page_size=0',
      'page_size=101',
      'page_size=1e1',
      'page_size=20&page_size=30',
    ]) {
      const reply = await call(server.url, 'GET', `/v1/leaderboards/most-popular?${query}`)
      // An empty period means the default; a repeated parameter is Elysia's to read (the hot path declines it).
      if (query === 'period=' || query.startsWith('page_size=20&')) expect(reply.status, query).toBe(200)
      else {
        expect(reply.status, query).toBe(400)
        expect(reply.body.code, query).toBe('INVALID_PARAMETER')
      }
    }
    for (const query of ['page_size=0', 'page_size=101', 'page_size=1e1', 'page_token=forged.token']) {
      for (let i = 0; i < 2; i++)
        expect((await call(server.url, 'GET', `/v1/feeds?${query}`)).status, query).toBe(query.startsWith('page_token') ? 422 : 400)
    }
    expect((await call(server.url, 'GET', '/v1/feeds/not-a-uuid')).body.code).toBe('INVALID_PARAMETER')
    expect((await call(server.url, 'GET', `/v1/feeds/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await call(server.url, 'GET', `/v1/wallets/${crypto.randomUUID()}/stats`)).body.code).toBe('WALLET_NOT_FOUND')
  })

  test('CORS headers on hot and routed answers alike; HEAD is answered like GET; other methods go to Elysia', async () => {
    for (const path of [
      `/v1/feeds/${feedId}`,
      `/v1/feeds/${feedId}?unrelated=1`,
      '/v1/leaderboards/top-feeds',
      '/v1/categories',
      ...paidPaths,
    ]) {
      const reply = await fetch(`${server.url}${path}`, { headers: { origin: 'https://app.example' } })
      expect(reply.headers.get('access-control-allow-origin'), path).toBe('*')
      expect(reply.headers.get('access-control-expose-headers'), path).toContain('PAYMENT-REQUIRED')
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD' })
      expect(head.status, path).toBe(reply.status)
      expect(head.headers.get('content-type'), path).toBe(reply.headers.get('content-type'))
      expect(challengeOf(head.headers.get('payment-required')), path).toEqual(challengeOf(reply.headers.get('payment-required')))
      expect(await head.text(), path).toBe('')
    }
    const post = await call(server.url, 'POST', `/v1/feeds/${feedId}`, { body: {} })
    expect(post.status).toBe(404)
    expect(post.body.code).toBe('NOT_FOUND')
    const unsigned = await call(server.url, 'DELETE', paidPaths[0])
    expect(unsigned.status).toBe(401) // Elysia's route: a signature is required
  })
})
