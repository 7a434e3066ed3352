// WebSub (issue 38): the public feeds name their hub, and a subscriber on 127.0.0.1 (HTTPS with the test certificate,
// trusted through NODE_EXTRA_CA_CERTS, and plain HTTP; TRELLIS_TEST_ALLOW_PRIVATE_FETCH lets the server reach
// loopback, which a server without it refuses, also tested) is verified, told of each new entry with the feed
// (signed when it gave a secret), no longer told once it unsubscribed or its lease ended. Hostile requests are 4xx,
// never 500; a flood of requests for one callback host is 429. And the entry.published webhook, verified the
// Standard Webhooks way.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { Value } from '@sinclair/typebox/value'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { WebhookPayload } from '../src/models/webhook.ts'
import { receiver, WEBHOOK_CERT, webhookTls } from './helpers/webhook-receiver.ts'
import { waitFor } from './helpers/ledger.ts'

interface Heard {
  method: string
  path: string
  query: URLSearchParams
  headers: Headers
  body: string
}

/**
 * A WebSub subscriber: a verification (GET) is echoed on /echo… paths, answered with something else on /silent…,
 * refused (404) elsewhere; /slow… takes 3 s to answer; a distribution (POST) is answered 410 on …gone…, else 204.
 */
function subscriber(tls: boolean) {
  const heard: Heard[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    ...(tls ? { tls: webhookTls() } : {}),
    async fetch(request) {
      const url = new URL(request.url)
      heard.push({
        method: request.method,
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: await request.text(),
      })
      if (request.method === 'POST') return new Response(null, { status: url.pathname.includes('gone') ? 410 : 204 })
      if (url.pathname.startsWith('/slow')) await Bun.sleep(3_000)
      if (url.pathname.startsWith('/echo')) return new Response(url.searchParams.get('hub.challenge'))
      if (url.pathname.startsWith('/silent')) return new Response('I did not ask for this')
      return new Response('no', { status: 404 })
    },
  })
  return {
    heard,
    url: (path: string) => `${tls ? 'https' : 'http'}://127.0.0.1:${server.port}${path}`,
    at: (path: string, method?: string) => heard.filter((h) => h.path === path && (!method || h.method === method)),
    stop: () => server.stop(true),
  }
}

let server: TestServer
let https: ReturnType<typeof subscriber>
let http: ReturnType<typeof subscriber>
let owner: Wallet
let feed: { id: string }

beforeAll(async () => {
  server = await startTestServer({
    TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1',
    NODE_EXTRA_CA_CERTS: WEBHOOK_CERT,
    TRELLIS_TEST_CLOCK_FILE: testClockFile(),
  })
  https = subscriber(true)
  http = subscriber(false)
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Followed, not polled' })
})
afterAll(async () => {
  https?.stop()
  http?.stop()
  await server?.dispose()
})

const hub = () => `${server.url}/v1/websub`
const topic = (format = 'feed.xml', feedId = feed.id) => `${server.url}/v1/feeds/${feedId}/${format}`
/** A hub request as subscribers send it: form-encoded. */
const ask = (fields: Record<string, string>, target = server) =>
  fetch(`${target.url}/v1/websub`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
const subscribe = (callback: string, more: Record<string, string> = {}) =>
  ask({ 'hub.mode': 'subscribe', 'hub.topic': topic(), 'hub.callback': callback, ...more })
/** Verified: the GET came and was echoed; a moment for the hub to record it. */
async function verified(sub: ReturnType<typeof subscriber>, path: string, mode = 'subscribe', count = 1) {
  await waitFor(
    `the ${mode} verification of ${path}`,
    async () => sub.at(path, 'GET').filter((h) => h.query.get('hub.mode') === mode).length >= count,
  )
  await Bun.sleep(500)
  return sub.at(path, 'GET').filter((h) => h.query.get('hub.mode') === mode)[count - 1]!
}
const publish = (title: string, feedId = feed.id) =>
  createEntry(server.url, owner, feedId, { content_base64: Buffer.from(title).toString('base64'), mime_type: 'text/plain', title })

describe('discovery', () => {
  test('each format names the hub and itself, in its body and its Link header, from the public URL (not the Host)', async () => {
    const link = (format: string) => `<${hub()}>; rel="hub", <${topic(format)}>; rel="self"`
    for (const format of ['feed.xml', 'feed.atom', 'feed.json']) {
      const reply = await fetch(topic(format), { headers: { host: 'evil.example' } })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('link')).toBe(link(format))
      const body = await reply.text()
      expect(body).not.toContain('evil.example')
      if (format === 'feed.xml') {
        expect(body).toContain(`<atom:link href="${hub()}" rel="hub"/>`)
        expect(body).toContain(`<atom:link href="${topic(format)}" rel="self" type="application/rss+xml"/>`)
      } else if (format === 'feed.atom') {
        expect(body).toContain(`<link rel="hub" href="${hub()}"/>`)
        expect(body).toContain(`<link rel="self" type="application/atom+xml" href="${topic(format)}"/>`)
      } else {
        const json = JSON.parse(body)
        expect(json.hubs).toEqual([{ type: 'WebSub', url: hub() }])
        expect(json.feed_url).toBe(topic(format))
      }
    }
    const unchanged = await fetch(topic(), { headers: { 'if-none-match': (await fetch(topic())).headers.get('etag')! } })
    expect(unchanged.status).toBe(304)
    expect(unchanged.headers.get('link')).toBe(link('feed.xml'))
  })
})

describe('subscribing', () => {
  const SECRET = 'a secret only the subscriber and the hub know'

  test('verified by its challenge, then told of a new entry once: the feed in its format, linked and signed', async () => {
    expect((await subscribe(https.url('/echo-rss'), { 'hub.secret': SECRET })).status).toBe(202)
    const json = await ask({ 'hub.mode': 'subscribe', 'hub.topic': topic('feed.json'), 'hub.callback': http.url('/echo-json?user=7') })
    expect(json.status).toBe(202)
    const check = await verified(https, '/echo-rss')
    expect(check.query.get('hub.topic')).toBe(topic())
    expect(check.query.get('hub.lease_seconds')).toBe('864000') // 10 days, the default
    expect(check.query.get('hub.challenge')).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const jsonCheck = await verified(http, '/echo-json')
    expect(jsonCheck.query.get('user')).toBe('7') // the callback's own query is kept
    expect(https.at('/echo-rss', 'POST')).toHaveLength(0)

    const entry = await publish('Told, not polled')
    await waitFor('the distributions', async () => https.at('/echo-rss', 'POST').length > 0 && http.at('/echo-json', 'POST').length > 0)
    const [told] = https.at('/echo-rss', 'POST')
    expect(told!.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8')
    expect(told!.headers.get('link')).toBe(`<${hub()}>; rel="hub", <${topic()}>; rel="self"`)
    expect(told!.body).toContain('<title>Told, not polled</title>')
    expect(told!.body).toContain(`urn:uuid:${entry.id}`)
    const signature = createHmac('sha256', SECRET).update(told!.body).digest('hex')
    expect(told!.headers.get('x-hub-signature')).toBe(`sha256=${signature}`)
    const [toldJson] = http.at('/echo-json', 'POST')
    expect(toldJson!.headers.get('content-type')).toBe('application/feed+json; charset=utf-8')
    expect(toldJson!.headers.get('x-hub-signature')).toBeNull() // no secret given
    expect(JSON.parse(toldJson!.body).items.map((i: { id: string }) => i.id)).toContain(entry.id)
    await Bun.sleep(2_500)
    expect(https.at('/echo-rss', 'POST')).toHaveLength(1)
    expect(http.at('/echo-json', 'POST')).toHaveLength(1)
  })

  test('a callback that does not echo the challenge (or refuses) is not subscribed: asked once, never told', async () => {
    expect((await subscribe(https.url('/silent'))).status).toBe(202)
    expect((await subscribe(https.url('/refuses'))).status).toBe(202)
    await waitFor('both verifications', async () => https.at('/silent', 'GET').length > 0 && https.at('/refuses', 'GET').length > 0)
    await Bun.sleep(500)
    const before = https.at('/echo-rss', 'POST').length
    await publish('Not for the silent')
    await waitFor('the subscriber that is', async () => https.at('/echo-rss', 'POST').length > before)
    await Bun.sleep(1_500)
    expect(https.at('/silent', 'POST')).toHaveLength(0)
    expect(https.at('/refuses', 'POST')).toHaveLength(0)
    expect(https.at('/silent', 'GET')).toHaveLength(1)
    expect(https.at('/refuses', 'GET')).toHaveLength(1)
  })

  test('unsubscribing, once verified, stops the distribution; a subscriber answering 410 is unsubscribed', async () => {
    expect((await subscribe(http.url('/echo-leaving'))).status).toBe(202)
    expect((await subscribe(http.url('/echo-gone'))).status).toBe(202)
    await verified(http, '/echo-leaving')
    await verified(http, '/echo-gone')
    const unsubscribe = await ask({ 'hub.mode': 'unsubscribe', 'hub.topic': topic(), 'hub.callback': http.url('/echo-leaving') })
    expect(unsubscribe.status).toBe(202)
    const check = await verified(http, '/echo-leaving', 'unsubscribe')
    expect(check.query.get('hub.lease_seconds')).toBeNull()
    await publish('After they left')
    await waitFor(
      'the ones still subscribed',
      async () => https.at('/echo-rss', 'POST').length >= 3 && http.at('/echo-gone', 'POST').length > 0,
    )
    await publish('After the 410')
    await waitFor('the ones still subscribed', async () => https.at('/echo-rss', 'POST').length >= 4)
    await Bun.sleep(1_500)
    expect(http.at('/echo-leaving', 'POST')).toHaveLength(0)
    expect(http.at('/echo-gone', 'POST')).toHaveLength(1) // its 410 ended the subscription
    // An unsubscribe from what is not subscribed asks nothing.
    expect((await ask({ 'hub.mode': 'unsubscribe', 'hub.topic': topic(), 'hub.callback': http.url('/echo-never') })).status).toBe(202)
    await Bun.sleep(1_500)
    expect(http.at('/echo-never')).toHaveLength(0)
  })

  test('a paid entry made free is told too: the feed now lists it free', async () => {
    expect((await subscribe(https.url('/echo-freed'))).status).toBe(202)
    await verified(https, '/echo-freed')
    const paid = await createEntry(server.url, owner, feed.id, {
      content_base64: Buffer.from('members only').toString('base64'),
      mime_type: 'text/plain',
      title: 'Members first',
      is_free: false,
      price: { amount: '50000', currency: 'USDC' },
    })
    await waitFor('the paid entry told', async () => https.at('/echo-freed', 'POST').length === 1)
    expect(https.at('/echo-freed', 'POST')[0]!.body).toContain('<title>Members first (0.05 USDC)</title>')
    const freed = await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${paid.id}`, { wallet: owner, body: { is_free: true } })
    expect(freed.status).toBe(200)
    await waitFor('the entry made free told', async () => https.at('/echo-freed', 'POST').length === 2)
    expect(https.at('/echo-freed', 'POST')[1]!.body).toContain('<title>Members first</title>')
  })

  test('a lease asked for is kept between 1 hour and 30 days; re-subscribing renews it', async () => {
    expect((await subscribe(https.url('/echo-short'), { 'hub.lease_seconds': '10' })).status).toBe(202)
    expect((await verified(https, '/echo-short')).query.get('hub.lease_seconds')).toBe('3600')
    expect((await subscribe(https.url('/echo-long'), { 'hub.lease_seconds': '99999999' })).status).toBe(202)
    expect((await verified(https, '/echo-long')).query.get('hub.lease_seconds')).toBe('2592000')
    expect((await subscribe(https.url('/echo-long'), { 'hub.lease_seconds': '7200' })).status).toBe(202)
    expect((await verified(https, '/echo-long', 'subscribe', 2)).query.get('hub.lease_seconds')).toBe('7200')
  })
})

describe('hostile requests', () => {
  test('bad modes, topics, callbacks, secrets, leases and bodies are 4xx, never 500', async () => {
    const good = { 'hub.mode': 'subscribe', 'hub.topic': topic(), 'hub.callback': https.url('/echo-hostile') }
    const bad: Record<string, string>[] = [
      { ...good, 'hub.mode': 'publish' },
      { ...good, 'hub.mode': '' },
      { ...good, 'hub.topic': 'https://elsewhere.example/v1/feeds/x/feed.xml' },
      { ...good, 'hub.topic': topic('feed.rss') },
      { ...good, 'hub.topic': `${topic()}?page=2` },
      { ...good, 'hub.topic': `${server.url}/v1/feeds/not-a-uuid/feed.xml` },
      { ...good, 'hub.topic': 'not a url' },
      { ...good, 'hub.callback': 'ftp://127.0.0.1/x' },
      { ...good, 'hub.callback': 'https://user:pw@127.0.0.1/x' },
      { ...good, 'hub.callback': 'javascript:alert(1)' },
      { ...good, 'hub.callback': 'no url at all' },
      { ...good, 'hub.secret': 'x'.repeat(200) },
      { ...good, 'hub.secret': 'é'.repeat(100) }, // 100 characters, 200 bytes
      { ...good, 'hub.lease_seconds': 'forever' },
      { ...good, 'hub.lease_seconds': '-5' },
      { 'hub.mode': 'subscribe', 'hub.topic': topic() },
      { ...good, 'hub.callback': `https://127.0.0.1/${'a'.repeat(3000)}` },
    ]
    for (const fields of bad) {
      const reply = await ask(fields)
      expect({ fields, status: reply.status }).toEqual({ fields, status: 400 })
      expect(typeof (await reply.json()).code).toBe('string')
    }
    const unknown = await ask({ ...good, 'hub.topic': topic('feed.xml', crypto.randomUUID()) })
    expect(unknown.status).toBe(404)
    expect((await unknown.json()).code).toBe('FEED_NOT_FOUND')
    const raw = (body: BodyInit, type = 'application/x-www-form-urlencoded') =>
      fetch(hub(), { method: 'POST', headers: { 'content-type': type }, body })
    for (const reply of [
      await raw(''),
      await raw(new Uint8Array([0, 255, 254, 1, 2])),
      await raw('hub.mode=subscribe&hub.topic=%E0%A4%A&hub.callback'),
      await raw('{"hub.mode":', 'application/json'),
      await raw('[1,2]', 'application/json'),
      await raw(`hub.mode=subscribe&hub.topic=${'x'.repeat(9_000)}`),
    ])
      expect(reply.status).toBeOneOf([400, 413])
    expect((await fetch(hub())).status).toBe(404) // a hub is asked by POST
    // Nothing of these was verified.
    await Bun.sleep(1_200)
    expect(https.at('/echo-hostile')).toHaveLength(0)
  })

  test('a flood of requests for one callback host is 429 once 20 wait for their verification', async () => {
    const replies = []
    for (let i = 0; i < 24; i++) replies.push(await subscribe(http.url(`/slow-${i}`)))
    const statuses = replies.map((r) => r.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(20)
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429])
    const busy = replies[20]!
    expect(busy.headers.get('retry-after')).toBe('60')
    expect((await busy.json()).code).toBe('WEBSUB_BUSY')
    // The verifications answered (not echoed), the host has room again.
    await waitFor('room for the host', async () => (await subscribe(https.url('/echo-after-flood'))).status === 202, 20_000)
  })

  test('a server without the test hook refuses loopback, private and link-local callbacks', async () => {
    const guarded = await startTestServer()
    try {
      const feedId = (await createFeed(guarded.url, newWallet(), { name: 'guarded' })).id
      for (const callback of [
        'http://127.0.0.1:9/cb',
        'https://localhost/cb',
        'http://10.0.0.1/cb',
        'http://192.168.1.1/cb',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/cb',
        'http://[::ffff:127.0.0.1]/cb',
      ]) {
        const reply = await ask(
          { 'hub.mode': 'subscribe', 'hub.topic': `${guarded.url}/v1/feeds/${feedId}/feed.xml`, 'hub.callback': callback },
          guarded,
        )
        expect({ callback, status: reply.status }).toEqual({ callback, status: 400 })
        expect((await reply.json()).code).toBe('INVALID_WEBSUB_REQUEST')
      }
      // A public address passes (an unsubscribe from nothing: accepted, and nothing is sent to it; the benchmark's request).
      const unsubscribe = { 'hub.mode': 'unsubscribe', 'hub.topic': `${guarded.url}/v1/feeds/${feedId}/feed.xml` }
      expect((await ask({ ...unsubscribe, 'hub.callback': 'https://1.1.1.1/websub-bench' }, guarded)).status).toBe(202)
    } finally {
      await guarded.dispose()
    }
  })
})

describe('the entry.published webhook', () => {
  test("each entry published is told to the owner's endpoints, signed the Standard Webhooks way", async () => {
    const hooks = receiver(() => 200)
    try {
      const hook = await call(server.url, 'POST', '/v1/webhooks', { wallet: owner, body: { url: hooks.url('/published') } })
      expect(hook.status).toBe(201)
      expect(hook.body.events).toContain('entry.published')
      const entry = await createEntry(server.url, owner, feed.id, {
        content_base64: Buffer.from('paid words').toString('base64'),
        mime_type: 'text/plain',
        title: 'For the integrations',
        description: 'told at once',
        tags: ['news'],
        is_free: false,
        price: { amount: '25000', currency: 'USDC' },
      })
      await waitFor('the entry.published delivery', async () => hooks.received.some((r) => r.path === '/published'))
      const [delivery] = hooks.received.filter((r) => r.path === '/published')
      const event = new Webhook(hook.body.secret).verify(delivery!.body, delivery!.headers) as WebhookPayload
      expect([...Value.Errors(WebhookPayload, event)].map((e) => `${e.path}: ${e.message}`)).toEqual([])
      expect(event.type).toBe('entry.published')
      expect(event.data).toEqual({
        entry_id: entry.id,
        feed_id: feed.id,
        feed_name: 'Followed, not polled',
        entry_title: 'For the integrations',
        description: 'told at once',
        mime_type: 'text/plain',
        tags: ['news'],
        is_free: false,
        price: '25000',
        expires_at: null,
        created_at: entry.created_at,
      })
      expect(delivery!.headers['webhook-id']).toBe(`published_${entry.id}_${hook.body.id}`)
    } finally {
      hooks.stop()
    }
  })
})

describe('leases', () => {
  test('a lease that ended removes the subscription: its callback is told nothing more', async () => {
    expect((await subscribe(http.url('/echo-leased'), { 'hub.lease_seconds': '3600' })).status).toBe(202)
    expect((await subscribe(http.url('/echo-staying'))).status).toBe(202)
    await verified(http, '/echo-leased')
    await verified(http, '/echo-staying')
    await publish('Within the lease')
    await waitFor(
      'the distributions',
      async () => http.at('/echo-leased', 'POST').length === 1 && http.at('/echo-staying', 'POST').length === 1,
    )
    await server.moveClock(3_700) // the deadline jobs run: the hour is over
    await Bun.sleep(1_000)
    await server.moveClock(0) // back, for the owner's signature: the lease stays over
    await publish('After the lease')
    await waitFor('the subscriber whose lease runs', async () => http.at('/echo-staying', 'POST').length === 2)
    await Bun.sleep(1_500)
    expect(http.at('/echo-leased', 'POST')).toHaveLength(1)
  })
})
