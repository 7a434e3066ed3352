import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call } from '../dev/api.ts'

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
      Promise.all(Array.from({ length: 100 }, () => call(url, 'GET', '/v1/categories', { headers: { 'x-forwarded-for': `203.0.113.9, ${client}` } })))
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
