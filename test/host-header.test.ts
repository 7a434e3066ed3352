// The Host header a client or proxy sends: short ones (nginx's `proxy_pass http://api;` sends `Host: api`) route
// like any other; ones that make no URL are refused with 400, never a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { rawRequest } from './helpers/raw-http.ts'

let server: TestServer
let owner: Wallet
let feedId: string
let entryId: string
let paidId: string
beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner)).id
  entryId = (await createEntry(server.url, owner, feedId, { content_base64: b64('hello'), mime_type: 'text/plain' })).id
  paidId = (
    await createEntry(server.url, owner, feedId, {
      content_base64: b64('paid'),
      mime_type: 'text/plain',
      is_free: false,
      price: { amount: '10000', currency: 'USDC' },
    })
  ).id
})
afterAll(() => server.dispose())

describe('a short Host header', () => {
  for (const host of ['api', 'x', 'app:80']) {
    test(`Host: ${host}: Elysia's routes answer as with any host`, async () => {
      const headers = { host }
      expect((await call(server.url, 'GET', '/health', { headers })).status).toBe(200)
      const nonce = await call(server.url, 'POST', '/v1/auth/nonce', { headers, body: { wallet_address: owner.address } })
      expect(nonce.status).toBe(200)
      expect(nonce.body.message).toContain('with nonce: ')
      const list = await call(server.url, 'GET', `/v1/feeds/${feedId}/entries?page_size=5`, { headers })
      expect(list.status).toBe(200)
      expect(list.body.data.map((e: { id: string }) => e.id)).toContain(entryId)
      const feeds = await call(server.url, 'GET', '/v1/feeds?page_size=100', { headers })
      expect(feeds.status).toBe(200)
      expect(feeds.body.data.map((f: { id: string }) => f.id)).toContain(feedId)
      const content = await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${entryId}/content`, { headers })
      expect(content.status).toBe(200)
      expect(content.text).toBe('hello')
      const signed = { ...(await authHeaders(server.url, owner)), host }
      const patch = await call(server.url, 'PATCH', `/v1/feeds/${feedId}`, { headers: signed, body: { description: `via ${host}` } })
      expect(patch.status).toBe(200)
      expect(patch.body.description).toBe(`via ${host}`)
      const link = await call(server.url, 'POST', `/v1/feeds/${feedId}/entries/${entryId}/access-link`, {
        headers: { ...(await authHeaders(server.url, owner)), host },
        body: {},
      })
      expect(link.status).toBe(201)
      const opened = await call(server.url, 'GET', `/v1/access/${link.body.access_token}`, { headers })
      expect(opened.status).toBe(200)
      expect(opened.text).toBe('hello')
      // An unknown path is still the documented 404.
      const unknown = await call(server.url, 'GET', '/v1/nothing-here', { headers })
      expect(unknown.status).toBe(404)
      expect(unknown.body.code).toBe('NOT_FOUND')
    })
  }
})

describe('a Host header that makes no URL', () => {
  const paths = () => [
    '/v1/feeds',
    `/v1/feeds/${feedId}`,
    `/v1/feeds/${feedId}/entries`,
    '/v1/transactions',
    '/v1/leaderboards/top-feeds',
    `/v1/feeds/${feedId}/entries/${entryId}/content`,
    `/v1/feeds/${feedId}/entries/${paidId}`,
    '/v1/no-such-route',
  ]
  const requests = (path: string) => [
    `GET ${path} HTTP/1.0\r\n\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: a:b:c\r\nConnection: close\r\n\r\n`,
    `GET ${path} HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n`,
    // The pay path builds the x402 resource from the request's URL.
    `GET ${path} HTTP/1.1\r\nHost: a:b:c\r\nX-PAYMENT: eyJ4NDAyVmVyc2lvbiI6MX0=\r\nConnection: close\r\n\r\n`,
    `POST ${path} HTTP/1.1\r\nHost: a:b:c\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  ]

  test('400 INVALID_HOST in the documented error shape, and nothing logged at error level', async () => {
    const before = server.logs.length
    for (const path of paths()) {
      for (const text of requests(path)) {
        const reply = await rawRequest(server.url, text)
        const what = `${JSON.stringify(text)} -> ${reply.status} ${reply.body}`
        expect(what).toContain(' -> 400 ')
        expect(JSON.parse(reply.body)).toEqual({ error: expect.any(String), code: 'INVALID_HOST', details: expect.any(String) })
        expect(reply.headers['content-type']).toContain('application/json')
        expect(reply.headers['access-control-allow-origin']).toBe('*')
      }
    }
    const logged = server.logs.slice(before).map((line) => JSON.parse(line))
    expect(logged.filter((line) => line.level === 'error')).toEqual([])
    // Each is logged as a request, with its path.
    expect(logged.some((line) => line.msg === 'request' && line.status === 400 && line.path === '/v1/feeds')).toBe(true)
  })

  test('/health still answers an HTTP/1.0 check without Host (as HAProxy sends by default)', async () => {
    const reply = await rawRequest(server.url, 'GET /health HTTP/1.0\r\n\r\n')
    expect(reply.status).toBe(200)
    expect(JSON.parse(reply.body).status).toBe('ok')
    expect((await rawRequest(server.url, 'GET /health HTTP/1.1\r\nHost: a:b:c\r\nConnection: close\r\n\r\n')).status).toBe(200)
  })

  test('the server still answers well-formed requests', async () => {
    expect((await call(server.url, 'GET', `/v1/feeds/${feedId}`)).status).toBe(200)
    expect((await rawRequest(server.url, `GET /v1/feeds/${feedId} HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n`)).status).toBe(200)
  })
})
