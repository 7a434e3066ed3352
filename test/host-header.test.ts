// The Host header a client or proxy sends: short ones (nginx's `proxy_pass http://api;` sends `Host: api`) route
// like any other; ones that make no URL are refused with 400, never a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feedId: string
let entryId: string
beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner)).id
  entryId = (await createEntry(server.url, owner, feedId, { content_base64: b64('hello'), mime_type: 'text/plain' })).id
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
      expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([entryId])
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
      const link = await call(server.url, 'POST', `/v1/feeds/${feedId}/entries/${entryId}/access-link`, { headers: { ...(await authHeaders(server.url, owner)), host }, body: {} })
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
