// Pass webhooks (issue 37) on a real chain, delivered over HTTPS to a real receiver and verified with the Standard
// Webhooks library: pass.sold for every pass sold (with its ledger row), pass.expired once when a holder's time with
// the feed runs out — not when a pass ends into the one bought to extend it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { Value } from '@sinclair/typebox/value'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { call, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { WebhookPayload } from '../src/models/webhook.ts'
import { receiver, WEBHOOK_CERT, type Received } from './helpers/webhook-receiver.ts'
import { waitFor } from './helpers/ledger.ts'

const PASS_PRICE = 40_000n
const HOUR = 3_600

let chain: TestChain
let server: TestServer
let hooks: ReturnType<typeof receiver>
let creator: Wallet
let feedId: string

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({
    ...chain.env,
    TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1',
    NODE_EXTRA_CA_CERTS: WEBHOOK_CERT,
    TRELLIS_TEST_CLOCK_FILE: testClockFile(),
  })
  hooks = receiver(() => 200)
  creator = newWallet()
  feedId = (await createFeed(server.url, creator, { name: 'Passes told' })).id
  const offered = await call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, {
    wallet: creator,
    body: { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: HOUR },
  })
  expect(offered.status).toBe(200)
})
afterAll(async () => {
  hooks?.stop()
  await server?.dispose()
  await chain?.stop()
})

const at = (path: string) => hooks.received.filter((r) => r.path === path)
const verified = (secret: string, r: Received) => {
  const event = new Webhook(secret).verify(r.body, r.headers)
  expect([...Value.Errors(WebhookPayload, event)].map((error) => `${error.path}: ${error.message}`)).toEqual([])
  return event as WebhookPayload & { data: Record<string, unknown> }
}
async function buyPass(buyer: Awaited<ReturnType<TestChain['newFundedBuyer']>>) {
  const payment = await v1Payment(buyer, { to: creator.address, value: PASS_PRICE })
  const bought = await fetch(`${server.url}/v1/feeds/${feedId}/pass/purchases`, {
    method: 'POST',
    headers: { 'x-payment': encodePaymentHeader(payment) },
  })
  expect(bought.status).toBe(201)
  return (await bought.json()) as { id: string; starts_at: number; expires_at: number; transaction_id: string }
}

describe('pass webhooks', () => {
  test('pass.sold per pass with its ledger row; pass.expired once, when the extended time runs out', async () => {
    const hook = await call(server.url, 'POST', '/v1/webhooks', { wallet: creator, body: { url: hooks.url('/passes') } })
    expect(hook.status).toBe(201)
    expect(hook.body.events).toEqual(['sale.recorded', 'entry.expired', 'pass.sold', 'pass.expired', 'entry.published'])
    const salesOnly = await call(server.url, 'POST', '/v1/webhooks', {
      wallet: creator,
      body: { url: hooks.url('/sales'), events: ['sale.recorded'] },
    })
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const first = await buyPass(buyer)
    const second = await buyPass(buyer) // extends: it starts where the first ends
    expect(second.starts_at).toBe(first.expires_at)
    await waitFor('two pass.sold deliveries', async () => at('/passes').length >= 2)
    const ledger = (await call(server.url, 'GET', `/v1/transactions?feed_id=${feedId}`)).body.data as Record<string, unknown>[]
    const sold = at('/passes').map((r) => verified(hook.body.secret, r))
    expect(sold.map((e) => e.type)).toEqual(['pass.sold', 'pass.sold'])
    for (const pass of [first, second]) {
      const row = ledger.find((t) => t.id === pass.transaction_id)!
      expect(sold.find((e) => e.data.pass_id === pass.id)!.data).toEqual({
        transaction_id: pass.transaction_id,
        transaction_hash: row.transaction_hash,
        network: 'base-sepolia',
        asset: row.asset,
        amount: String(PASS_PRICE),
        payer: buyer.address,
        pay_to: creator.address,
        feed_id: feedId,
        feed_name: 'Passes told',
        pass_id: pass.id,
        holder: buyer.address,
        starts_at: pass.starts_at,
        expires_at: pass.expires_at,
        created_at: row.created_at,
      })
    }

    // The first pass ends into the second: nothing is told. The second ends: pass.expired, once.
    await server.moveClock(HOUR + 60)
    await Bun.sleep(2_500)
    expect(at('/passes')).toHaveLength(2)
    await server.moveClock(2 * HOUR + 60)
    await waitFor('the pass.expired delivery', async () => at('/passes').length >= 3)
    const ended = verified(hook.body.secret, at('/passes')[2]!)
    expect(ended).toEqual({
      type: 'pass.expired',
      timestamp: expect.any(String),
      data: {
        pass_id: second.id,
        feed_id: feedId,
        feed_name: 'Passes told',
        holder: buyer.address,
        starts_at: second.starts_at,
        expires_at: second.expires_at,
      },
    })
    await server.moveClock(3 * HOUR)
    await Bun.sleep(2_500)
    expect(at('/passes')).toHaveLength(3)
    // An endpoint that asked for entry sales only hears none of it.
    expect(at('/sales')).toHaveLength(0)
    expect(salesOnly.status).toBe(201)
  }, 60_000)
})
