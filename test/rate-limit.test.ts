import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call } from '../dev/api.ts'
import { rateLimiter } from '../src/edge/rate-limit.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ TRELLIS_RATE_LIMIT: 'on' })
})
afterAll(() => server.dispose())

test('GET /v1/transactions: 100 per hour per client, with its own counter, cacheable for 60 s', async () => {
  const replies = await Promise.all(Array.from({ length: 100 }, () => call(server.url, 'GET', '/v1/transactions')))
  expect(replies.every((r) => r.status === 200)).toBe(true)
  expect(replies[0].headers.get('cache-control')).toBe('public, max-age=60')
  expect(replies[0].headers.get('ratelimit-limit')).toBe('100')
  const limited = await call(server.url, 'GET', '/v1/transactions')
  expect(limited.status).toBe(429)
  expect(limited.body.code).toBe('RATE_LIMITED')
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500)
  expect(limited.headers.get('ratelimit-remaining')).toBe('0')
  // Other routes count separately.
  expect((await call(server.url, 'GET', '/v1/categories')).status).toBe(200)
})

test('everything else: 100 per 10 s; /health is exempt; the window resets', async () => {
  const replies = await Promise.all(Array.from({ length: 99 }, () => call(server.url, 'GET', '/v1/categories')))
  expect(replies.every((r) => r.status === 200)).toBe(true)
  const limited = await call(server.url, 'POST', '/v1/feeds', { body: {} })
  expect(limited.status).toBe(429)
  expect(limited.body).toMatchObject({ code: 'RATE_LIMITED', error: expect.any(String) })
  const retryAfter = Number(limited.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(10)
  expect((await call(server.url, 'GET', '/health')).status).toBe(200)
  await Bun.sleep(retryAfter * 1000 + 200)
  expect((await call(server.url, 'GET', '/v1/categories')).status).toBe(200)
}, 20_000)

test('behind a trusted proxy each client has its own window; otherwise X-Forwarded-For is ignored', async () => {
  const proxied = await startTestServer({ TRELLIS_RATE_LIMIT: 'on', TRELLIS_TRUST_PROXY: 'on' })
  const direct = await startTestServer({ TRELLIS_RATE_LIMIT: 'on' })
  try {
    const burst = (url: string, client: string) =>
      Promise.all(
        Array.from({ length: 100 }, () => call(url, 'GET', '/v1/categories', { headers: { 'x-forwarded-for': `203.0.113.9, ${client}` } })),
      )
    expect((await burst(proxied.url, '198.51.100.1')).every((r) => r.status === 200)).toBe(true)
    expect((await burst(proxied.url, '198.51.100.2')).every((r) => r.status === 200)).toBe(true)
    expect((await call(proxied.url, 'GET', '/v1/categories', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(429)
    // Without the setting, a forged header does not buy a fresh window.
    expect((await burst(direct.url, '198.51.100.1')).every((r) => r.status === 200)).toBe(true)
    expect((await call(direct.url, 'GET', '/v1/categories', { headers: { 'x-forwarded-for': '198.51.100.99' } })).status).toBe(429)
  } finally {
    await proxied.dispose()
    await direct.dispose()
  }
})

test("behind a trusted proxy, IPv6 clients count by /64: one subscriber's many addresses share one budget", async () => {
  const proxied = await startTestServer({ TRELLIS_RATE_LIMIT: 'on', TRELLIS_TRUST_PROXY: 'on' })
  try {
    const from = (client: string) => call(proxied.url, 'GET', '/v1/categories', { headers: { 'x-forwarded-for': client } })
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => from(`2001:db8:1:2:${i.toString(16)}::${(i * 7).toString(16)}`)),
    )
    expect(replies.every((r) => r.status === 200)).toBe(true)
    expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429)
    expect((await from('2001:db8:1:3::1')).status).toBe(200) // the next /64 is another client
    // An IPv4 client written as an IPv4-mapped IPv6 address is the same client.
    expect((await Promise.all(Array.from({ length: 100 }, () => from('198.51.100.7')))).every((r) => r.status === 200)).toBe(true)
    expect((await from('::ffff:198.51.100.7')).status).toBe(429)
  } finally {
    await proxied.dispose()
  }
})

test('a flood of more distinct clients than the table holds neither lifts a reached limit nor grows the table', () => {
  let t = 1_000
  const limiter = rateLimiter(() => t)
  const limited = () => limiter.check('GET', '/v1/categories', '203.0.113.5').rejected?.status
  for (let i = 0; i < 100; i++) expect(limited()).toBeUndefined()
  expect(limited()).toBe(429)
  t += 1
  for (let i = 0; i < 150_000; i++) limiter.check('GET', '/v1/categories', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
  expect(limited()).toBe(429)
  expect(limiter.size()).toBeLessThanOrEqual(100_000)
  // The window still ends when it was due to.
  t += 9
  expect(limited()).toBeUndefined()
})

test('the table drops the oldest windows first, and a client at its limit only when every window is', () => {
  const t = 0
  const limiter = rateLimiter(() => t, 3)
  const hit = (ip: string) => limiter.check('POST', '/v1/feeds', ip).headers['ratelimit-remaining']
  for (let i = 0; i < 100; i++) hit('192.0.2.1') // at its limit
  hit('192.0.2.2')
  hit('192.0.2.3')
  hit('192.0.2.4') // drops .2, the oldest under its limit
  expect(hit('192.0.2.3')).toBe('98')
  expect(hit('192.0.2.2')).toBe('99') // a new window, for which .3 (now the oldest under its limit) is dropped
  expect(hit('192.0.2.4')).toBe('98')
  expect(hit('192.0.2.3')).toBe('99')
  expect(limiter.check('POST', '/v1/feeds', '192.0.2.1').rejected?.status).toBe(429)
})
