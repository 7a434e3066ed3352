// Sale webhooks on a real server and a real chain, delivered over HTTPS to a real receiver (127.0.0.1, trusted
// through NODE_EXTRA_CA_CERTS; TRELLIS_TEST_ALLOW_PRIVATE_FETCH lets this server reach loopback, which a server
// without it refuses, also tested). Every delivery is verified with the Standard Webhooks reference library.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { Value } from '@sinclair/typebox/value'
import { WebhookPayload } from '../src/models/webhook.ts'
import { freePort, receiver, silentReceiver, WEBHOOK_CERT as CERT, type Received } from './helpers/webhook-receiver.ts'

const PRICE = 25_000n

let chain: TestChain
let server: TestServer
let hooks: ReturnType<typeof receiver>
let creator: Wallet
let feed: { id: string }

const env = () => ({
  ...chain.env,
  TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1',
  NODE_EXTRA_CA_CERTS: CERT,
  TRELLIS_TEST_WEBHOOK_RETRY_S: '1',
  TRELLIS_TEST_WEBHOOK_GIVE_UP_S: '5',
})

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(env())
  hooks = receiver((path, seen) => (path === '/down' || path === '/rests' ? 503 : path === '/flaky' && seen < 2 ? 500 : 200))
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'sold with webhooks' })
})
afterAll(async () => {
  hooks?.stop()
  await server?.dispose()
  await chain?.stop()
})

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

const register = (wallet: Wallet, body: Record<string, unknown>, target = server) =>
  call(target.url, 'POST', '/v1/webhooks', { wallet, body })
const deliveries = async (wallet: Wallet, id: string, query = '') =>
  (await call(server.url, 'GET', `/v1/webhooks/${id}/deliveries${query}`, { wallet })).body
const paidEntry = (title: string, body: Record<string, unknown> = {}) =>
  createEntry(server.url, creator, feed.id, {
    content_base64: b64(`paid: ${title}`),
    title,
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
    ...body,
  })
async function buy(entry: { id: string }): Promise<{ buyer: Wallet; hash: string }> {
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const paid = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })) },
  })
  expect(paid.status).toBe(200)
  const settlement = JSON.parse(Buffer.from(paid.headers.get('x-payment-response')!, 'base64').toString())
  return { buyer, hash: settlement.transaction }
}
/** The server's webhook counters in /metrics. */
const webhookCounts = async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)![1])
  return {
    delivered: value('trellis_webhook_attempts_total{result="delivered"}'),
    failed: value('trellis_webhook_attempts_total{result="failed"}'),
    given_up: value('trellis_webhook_deliveries_given_up_total'),
  }
}
const at = (path: string) => hooks.received.filter((r) => r.path === path)
/**
 * The delivery verified as a receiver verifies it (signature, and a timestamp within 5 minutes), parsed; it is what
 * the payload model (models/webhook.ts) says a delivery is, no field more or less.
 */
const verified = (secret: string, r: Received) => {
  const event = new Webhook(secret).verify(r.body, r.headers)
  expect([...Value.Errors(WebhookPayload, event)].map((error) => `${error.path}: ${error.message}`)).toEqual([])
  return event as WebhookPayload & { data: Record<string, unknown> }
}

describe('registering', () => {
  test('a secret shown once; listed without it; at most 5 per wallet; only its wallet removes one', async () => {
    const wallet = newWallet()
    const first = await register(wallet, { url: hooks.url('/listed'), description: 'my shop' })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({
      url: hooks.url('/listed'),
      description: 'my shop',
      events: ['sale.recorded', 'entry.expired', 'pass.sold', 'pass.expired', 'entry.published'],
      is_active: true,
    })
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const listed = await call(server.url, 'GET', '/v1/webhooks', { wallet })
    expect(listed.body.data).toHaveLength(1)
    expect(listed.text).not.toContain('whsec_')
    for (let i = 2; i <= 5; i++) expect((await register(wallet, { url: hooks.url(`/n${i}`), events: ['sale.recorded'] })).status).toBe(201)
    expectError(await register(wallet, { url: hooks.url('/sixth') }), 403, 'WEBHOOK_LIMIT_REACHED')
    expectError(await call(server.url, 'DELETE', `/v1/webhooks/${first.body.id}`, { wallet: newWallet() }), 403, 'UNAUTHORIZED')
    expectError(await call(server.url, 'DELETE', `/v1/webhooks/${crypto.randomUUID()}`, { wallet }), 404, 'WEBHOOK_NOT_FOUND')
    expectError(await call(server.url, 'GET', `/v1/webhooks/${first.body.id}/deliveries`, { wallet: newWallet() }), 403, 'UNAUTHORIZED')
    expect((await call(server.url, 'DELETE', `/v1/webhooks/${first.body.id}`, { wallet })).status).toBe(204)
    expect((await register(wallet, { url: hooks.url('/sixth') })).status).toBe(201) // room again
    expect((await call(server.url, 'POST', '/v1/webhooks', { body: { url: hooks.url('/x') } })).status).toBe(401)
    expect((await call(server.url, 'GET', '/v1/webhooks')).status).toBe(401)
  })

  test('bad URLs and events: http, user:password, junk, unknown events → 400', async () => {
    const wallet = newWallet()
    for (const url of ['http://example.com/hook', 'ftp://example.com', 'https://user:pw@example.com/', 'not a url', 'https://']) {
      expect((await register(wallet, { url })).status).toBe(400)
    }
    for (const events of [[], ['sale.refunded'], ['sale.recorded', 'sale.recorded']])
      expect((await register(wallet, { url: hooks.url('/e'), events })).status).toBe(400)
    expect((await call(server.url, 'GET', '/v1/webhooks', { wallet })).body.data).toEqual([])
  })

  test('no private-network targets: a server without the test hook refuses loopback, private and link-local hosts', async () => {
    const strict = await startTestServer()
    try {
      const wallet = newWallet()
      for (const url of [
        hooks.url('/x'),
        'https://localhost/',
        'https://[::1]/',
        'https://10.1.2.3/',
        'https://169.254.169.254/latest',
        'https://192.168.0.1/',
        'https://0.0.0.0/',
      ]) {
        expectError(await register(wallet, { url }, strict), 400, 'INVALID_WEBHOOK_URL')
      }
    } finally {
      await strict.dispose()
    }
  })
})

describe('delivering', () => {
  test('a sale: one signed delivery with the ledger row, to the endpoints that asked for sales, once', async () => {
    const shop = await register(creator, { url: hooks.url('/ok'), events: ['sale.recorded'] })
    const expiriesOnly = await register(creator, { url: hooks.url('/expiries'), events: ['entry.expired'] })
    const entry = await paidEntry('sold once')
    const { buyer, hash } = await buy(entry)
    const [delivery] = await until('the sale webhook', () => at('/ok').length > 0 && at('/ok'))
    const event = verified(shop.body.secret, delivery!)
    const ledger = (await call(server.url, 'GET', `/v1/transactions?entry_id=${entry.id}`)).body.data
    expect(event).toEqual({
      type: 'sale.recorded',
      timestamp: expect.any(String),
      data: {
        transaction_id: ledger[0].id,
        transaction_hash: hash,
        network: 'base-sepolia',
        asset: ledger[0].asset,
        amount: String(PRICE),
        payer: buyer.address,
        pay_to: creator.address,
        entry_id: entry.id,
        feed_id: feed.id,
        entry_title: 'sold once',
        created_at: ledger[0].created_at,
      },
    })
    expect(() => new Webhook(expiriesOnly.body.secret).verify(delivery!.body, delivery!.headers)).toThrow()
    await Bun.sleep(2_500) // a few more runs of the sender
    expect(at('/ok')).toHaveLength(1)
    expect(at('/expiries')).toHaveLength(0)
    const log = await deliveries(creator, shop.body.id)
    expect(log.data).toEqual([
      expect.objectContaining({
        id: delivery!.headers['webhook-id'],
        event: 'sale.recorded',
        status: 'delivered',
        attempts: 1,
        last_status: 200,
        last_error: null,
        payload: delivery!.body,
        next_attempt_at: null,
      }),
    ])
  })

  test('retried with the same id and bytes until a 2xx; given up after the day (here 5 s); the log tells each', async () => {
    const before = await webhookCounts()
    const flaky = await register(creator, { url: hooks.url('/flaky'), events: ['sale.recorded'] })
    const down = await register(creator, { url: hooks.url('/down'), events: ['sale.recorded'] })
    await buy(await paidEntry('retried'))
    const attempts = await until('three attempts at /flaky', () => at('/flaky').length >= 3 && at('/flaky'))
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(new Set(attempts.map((r) => r.body)).size).toBe(1)
    for (const r of attempts) verified(flaky.body.secret, r)
    await until('the flaky delivery recorded', async () => (await deliveries(creator, flaky.body.id)).data[0].status === 'delivered')
    expect((await deliveries(creator, flaky.body.id)).data[0]).toMatchObject({ attempts: 3, last_status: 200 })
    const failed = await until('the delivery to /down given up', async () => {
      const [last] = (await deliveries(creator, down.body.id)).data
      return last.status === 'failed' && last
    })
    expect(failed.attempts).toBeGreaterThanOrEqual(2)
    expect(failed).toMatchObject({ last_status: 503, last_error: 'answered 503', next_attempt_at: null })
    const sent = at('/down').length
    await Bun.sleep(2_000)
    expect(at('/down')).toHaveLength(sent)
    expect(at('/flaky')).toHaveLength(3)
    // /metrics counts them (an alert tells a server that cannot send from endpoints that fail): the other endpoints
    // registered for sales add their own attempts, so at least these.
    const after = await webhookCounts()
    expect(after.delivered - before.delivered).toBeGreaterThanOrEqual(1)
    expect(after.failed - before.failed).toBeGreaterThanOrEqual(2 + failed.attempts)
    expect(after.given_up - before.given_up).toBeGreaterThanOrEqual(1)
  })

  test('free wallets whose endpoints never answer delay no one: 26 wallets × 5 silent endpoints, 520 ' +
    'deliveries hanging, another seller told within 3 s', async () => {
    // Each attempt waits for its timeout.
    const silent = silentReceiver()
    const hanging = () => silent.count.hanging
    // A server of its own, where a delivery is retried each second for a day: the silent ones are never given up.
    const busy = await startTestServer({ ...env(), TRELLIS_TEST_WEBHOOK_GIVE_UP_S: '86400' })
    try {
      // 26 new wallets (nothing paid to become one), each with 5 endpoints there and 4 entries sold: 520 deliveries.
      const silentHooks: Array<{ wallet: Wallet; id: string }> = []
      await Promise.all(
        Array.from({ length: 26 }, async (_, w) => {
          const stalled = newWallet()
          const stalledFeed = await createFeed(busy.url, stalled, { name: `stalls its webhooks ${w}` })
          for (let i = 0; i < 5; i++) {
            const hook = await register(stalled, { url: silent.url(`/hang/${w}/${i}`), events: ['sale.recorded'] }, busy)
            expect(hook.status).toBe(201)
            silentHooks.push({ wallet: stalled, id: hook.body.id })
          }
          const buyer = await chain.newFundedBuyer(1_000_000n)
          for (let i = 0; i < 4; i++) {
            const entry = await createEntry(busy.url, stalled, stalledFeed.id, {
              content_base64: b64(`hang ${w} ${i}`),
              is_free: false,
              price: { amount: String(PRICE), currency: 'USDC' },
            })
            const paid = await fetch(`${busy.url}/v1/feeds/${stalledFeed.id}/entries/${entry.id}/content`, {
              headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: stalled.address, value: PRICE })) },
            })
            expect(paid.status).toBe(200)
          }
        }),
      )
      const owed = async () =>
        (
          await Promise.all(
            silentHooks.map(async (h) => (await call(busy.url, 'GET', `/v1/webhooks/${h.id}/deliveries`, { wallet: h.wallet })).body.data),
          )
        )
          .flat()
          .filter((delivery: { status: string }) => delivery.status === 'pending').length
      /** A seller with a live endpoint sells once, while `load` holds: how long until its endpoint is told. */
      const honestSale = async (path: string, load: () => void) => {
        const other = newWallet()
        const shop = await register(other, { url: hooks.url(path), events: ['sale.recorded'] }, busy)
        const otherFeed = await createFeed(busy.url, other, { name: 'told at once' })
        const entry = await createEntry(busy.url, other, otherFeed.id, {
          content_base64: b64('prompt'),
          is_free: false,
          price: { amount: String(PRICE), currency: 'USDC' },
        })
        const buyer = await chain.newFundedBuyer(1_000_000n)
        const payment = encodePaymentHeader(await v1Payment(buyer, { to: other.address, value: PRICE }))
        load()
        const paid = await fetch(`${busy.url}/v1/feeds/${otherFeed.id}/entries/${entry.id}/content`, { headers: { 'x-payment': payment } })
        expect(paid.status).toBe(200)
        const sold = performance.now()
        const [told] = await until(`the live endpoint ${path} told`, () => at(path).length > 0 && at(path), 20_000)
        verified(shop.body.secret, told!)
        return performance.now() - sold
      }
      await until('the sender at work on the silent endpoints', () => hanging() >= 64)
      // While their first attempts hang (none has failed yet: each waits out its 5 s)...
      expect(await honestSale('/prompt', () => expect(hanging()).toBeGreaterThanOrEqual(64))).toBeLessThan(3_000)
      // ...and once each has failed and is tried again (the test's schedule: after 1 s), none delivered.
      await Bun.sleep(6_000)
      expect(await owed()).toBe(520)
      expect(await honestSale('/prompt-later', () => expect(hanging()).toBeGreaterThan(0))).toBeLessThan(3_000)
      expect(await owed()).toBe(520)
    } finally {
      await busy.dispose()
      silent.stop()
    }
  }, 90_000)

  test(
    'an endpoint that keeps failing rests: none of its deliveries is tried meanwhile; what it held ' + 'is given up after the day',
    async () => {
      // Retries after 1 s, then 60 s: the endpoint's second failure in a row rests it past the day (here 5 s).
      const resting = await startTestServer({ ...env(), TRELLIS_TEST_WEBHOOK_RETRY_S: '1,60' })
      try {
        const seller = newWallet()
        const hook = await register(seller, { url: hooks.url('/rests'), events: ['sale.recorded'] }, resting)
        const sellerFeed = await createFeed(resting.url, seller, { name: 'its endpoint is down' })
        const buyer = await chain.newFundedBuyer(1_000_000n)
        for (let i = 0; i < 3; i++) {
          const entry = await createEntry(resting.url, seller, sellerFeed.id, {
            content_base64: b64(`rests ${i}`),
            is_free: false,
            price: { amount: String(PRICE), currency: 'USDC' },
          })
          const paid = await fetch(`${resting.url}/v1/feeds/${sellerFeed.id}/entries/${entry.id}/content`, {
            headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: seller.address, value: PRICE })) },
          })
          expect(paid.status).toBe(200)
        }
        const log = async () =>
          (await call(resting.url, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { wallet: seller })).body.data as Array<{
            status: string
            attempts: number
            last_error: string | null
          }>
        const given = await until(
          'the deliveries given up',
          async () => {
            const all = await log()
            return all.length === 3 && all.every((d) => d.status === 'failed') && all
          },
          20_000,
        )
        // Two attempts failed in a row (a second apart), then none while it rested: a delivery was never tried.
        expect(at('/rests')).toHaveLength(2)
        expect(given.reduce((sum, d) => sum + d.attempts, 0)).toBe(2)
        expect(given.filter((d) => d.attempts === 0).length).toBeGreaterThanOrEqual(1)
        for (const d of given) expect(d.last_error).toBe(d.attempts === 0 ? 'not attempted: the endpoint kept failing' : 'answered 503')
      } finally {
        await resting.dispose()
      }
    },
  )

  test('the log pages; removing an endpoint cancels what it was still owed', async () => {
    const hook = await register(creator, { url: hooks.url('/down'), events: ['sale.recorded'] })
    await buy(await paidEntry('cancelled'))
    await until('a first failed attempt', async () => (await deliveries(creator, hook.body.id)).data[0]?.attempts >= 1)
    expect((await call(server.url, 'DELETE', `/v1/webhooks/${hook.body.id}`, { wallet: creator })).status).toBe(204)
    const shop = (await call(server.url, 'GET', '/v1/webhooks', { wallet: creator })).body.data.find(
      (h: { url: string }) => h.url === hooks.url('/ok'),
    )
    const first = await deliveries(creator, shop.id, '?page_size=1')
    expect(first.pagination.has_more).toBe(true)
    const second = await deliveries(creator, shop.id, `?page_size=1&page_token=${first.pagination.next_page_token}`)
    expect(second.data[0].id).not.toBe(first.data[0].id)
    expectError(
      await call(server.url, 'GET', `/v1/webhooks/${shop.id}/deliveries?page_token=forged`, { wallet: creator }),
      422,
      'INVALID_PAGE_TOKEN',
    )
  })
  test('the log says why an attempt failed and never how the server resolved the name; the server log has the detail', async () => {
    const own = await startTestServer(env())
    try {
      const seller = newWallet()
      const closed = freePort()
      const hook = await call(own.url, 'POST', '/v1/webhooks', {
        wallet: seller,
        body: { url: `https://localhost:${closed}/hook`, events: ['sale.recorded'] },
      })
      expect(hook.status).toBe(201)
      const sellerFeed = await createFeed(own.url, seller, { name: 'resolved elsewhere' })
      const entry = await createEntry(own.url, seller, sellerFeed.id, {
        content_base64: b64('sold'),
        is_free: false,
        price: { amount: String(PRICE), currency: 'USDC' },
      })
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const paid = await fetch(`${own.url}/v1/feeds/${sellerFeed.id}/entries/${entry.id}/content`, {
        headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: seller.address, value: PRICE })) },
      })
      expect(paid.status).toBe(200)
      const logOf = async () => (await call(own.url, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { wallet: seller })).body.data[0]
      // Nothing listens there: the log says so, not at which address the server looked.
      // An attempt counts once claimed; its outcome is written when it ends: wait for that.
      const refused = await until('an attempt that could not connect', async () => {
        const delivery = await logOf()
        return delivery?.attempts >= 1 && delivery.last_error !== null && delivery
      })
      expect(refused.last_error).toStartWith('could not connect to the endpoint')
      expect(JSON.stringify(refused)).not.toMatch(/127\.0\.0\.1|::1/)
      // The name now leads to a loopback address a server refuses (as a name rebound after registration would).
      const { TRELLIS_TEST_ALLOW_PRIVATE_FETCH: _, ...strict } = env()
      await own.restart({ ...strict, TRELLIS_TEST_WEBHOOK_GIVE_UP_S: '86400' })
      const vetted = await until('an attempt refused by the address check', async () => {
        const last = await logOf()
        return last?.last_error === "the endpoint's address is not public" && last
      })
      expect(JSON.stringify(vetted)).not.toMatch(/127\.0\.0\.1|::1/)
      expect(
        own.logs.some(
          (line) => line.includes('a webhook attempt failed') && /localhost → (127\.0\.0\.1|::1): not a public address/.test(line),
        ),
      ).toBe(true)
    } finally {
      await own.dispose()
    }
  })
})

describe('durable', () => {
  test('a delivery owed when the server is killed is sent after the restart, once; an early access ending is told too', async () => {
    const port = freePort()
    const late = receiver(() => 200, port)
    late.stop() // nothing listens there: attempts fail until it is back
    const wallet = creator
    // The events of this story (entry.published, also a default, is told in test/websub.test.ts).
    const hook = await register(wallet, { url: `https://127.0.0.1:${port}/late`, events: ['sale.recorded', 'entry.expired'] })
    const entry = await paidEntry('owed across a crash', { expires_at: Math.floor(Date.now() / 1000) + 3_600 })
    await buy(entry)
    await until('a failed attempt', async () => (await deliveries(wallet, hook.body.id)).data[0]?.attempts >= 1)
    await server.kill()
    const back = receiver(() => 200, port)
    try {
      // An hour later (the test clock), with a day to retry in: the expiry job ends the early access at start.
      await server.restart({ ...env(), TRELLIS_TEST_WEBHOOK_GIVE_UP_S: '86400', TRELLIS_TEST_CLOCK_OFFSET_S: '3700' })
      const got = await until('the sale and the expiry', () => back.received.length >= 2 && back.received)
      const events = got.map((r) => verified(hook.body.secret, r))
      expect(events.map((e) => e.type).sort()).toEqual(['entry.expired', 'sale.recorded'])
      expect(events.find((e) => e.type === 'entry.expired')!.data).toEqual({
        entry_id: entry.id,
        feed_id: feed.id,
        entry_title: 'owed across a crash',
        price: String(PRICE),
        expires_at: expect.any(Number),
      })
      await Bun.sleep(2_500)
      expect(back.received).toHaveLength(2)
      expect(new Set(back.received.map((r) => r.headers['webhook-id'])).size).toBe(2)
      // Signed an hour ahead, as the server's clock now is.
      const headers = { ...(await authHeaders(server.url, wallet)), 'x-timestamp': String(Math.floor(Date.now() / 1000) + 3_700) }
      const log = (await call(server.url, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { headers })).body.data
      expect(log.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered'])
      // A month on, the cleanup job (it runs at start) has removed them from the log.
      const month = 3_700 + 31 * 86_400
      await server.restart({ ...env(), TRELLIS_TEST_CLOCK_OFFSET_S: String(month) })
      await until('the old deliveries forgotten', async () => {
        const headers = { ...(await authHeaders(server.url, wallet)), 'x-timestamp': String(Math.floor(Date.now() / 1000) + month) }
        const reply = await call(server.url, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, { headers })
        expect(reply.status).toBe(200)
        return reply.body.data.length === 0
      })
    } finally {
      back.stop()
    }
  })
})
