// A feed's pass bought under attack and through crashes, as entries are (payments-hostile, payments, payments-crash):
// a payer who front-runs or cancels his own authorization, one payment sent twice at once (and as v1 and v2 at once),
// kill -9 between the settlement and its recording, kill -9 at a random moment during eight concurrent pass purchases.
// Every case ends with one charge, one ledger row of kind "pass" and one pass per payment, or with none of the three;
// the owners' on-chain balances moved by exactly their ledger rows, and verify-ledger finds nothing wrong.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { encodePaymentHeader, signTransferAuthorization, startChain, v1Payment, type Buyer, type TestChain } from '../dev/chain.ts'
import { startRpcProxy, type RpcProxy } from './helpers/rpc-proxy.ts'
import { frontRunner, honestAndSneaky, v1Header, type FrontRunner } from './helpers/front-run.ts'
import { expectBooksBalanced, gauge, ledgerRows, verifyLedger, waitFor } from './helpers/ledger.ts'

const PRICE = 20_000n
const DURATION_S = 3600
const SECRET = 'paid words'

let chain: TestChain
let rpc: RpcProxy
let server: TestServer
let env: Record<string, string>
let submitDirectly: FrontRunner['submitDirectly']
let cancelDirectly: FrontRunner['cancelDirectly']

beforeAll(async () => {
  chain = await startChain()
  rpc = await startRpcProxy(chain.rpcUrl)
  env = { ...chain.env, TRELLIS_RPC_URL: rpc.url, TRELLIS_RECONCILE_S: '1', TRELLIS_CONFIRM_TIMEOUT_S: '2', TRELLIS_LEDGER_CHECK_S: '1' }
  server = await startTestServer(env)
  ;({ submitDirectly, cancelDirectly } = frontRunner(chain))
})
afterAll(async () => {
  await server?.dispose()
  await rpc?.stop()
  await chain?.stop()
})

/** A fresh owner's feed with one paid entry and a pass on sale (the same price), and the owner's balance before anything happened. */
async function market() {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const entry = await createEntry(server.url, owner, feed.id, {
    content_base64: b64(SECRET),
    is_free: false,
    price: { amount: String(PRICE) },
  })
  const terms = { price: { amount: String(PRICE), currency: 'USDC' }, duration_s: DURATION_S }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, { wallet: owner, body: terms })).status).toBe(200)
  const path = { pass: `/v1/feeds/${feed.id}/pass/purchases`, content: `/v1/feeds/${feed.id}/entries/${entry.id}/content` }
  return { owner, feedId: feed.id as string, path, before: await chain.balanceOf(owner.address) }
}
type Market = Awaited<ReturnType<typeof market>>

const buy = (m: Market, header: string, extra: Record<string, string> = {}, name = 'x-payment') =>
  fetch(`${server.url}${m.path.pass}`, { method: 'POST', headers: { [name]: header, ...extra } })
const passRows = async (m: Market) => (await ledgerRows(server.url, `feed_id=${m.feedId}`)).filter((r) => r.kind === 'pass')
const books = (m: Market) => expectBooksBalanced(server.url, chain.balanceOf, m.owner.address, m.before)
/** The passes the buyer holds, as the buyer lists them (signed). */
async function passesOf(buyer: Buyer): Promise<any[]> {
  const listed = await call(server.url, 'GET', `/v1/passes?holder=${buyer.address}&page_size=100`, { wallet: buyer })
  expect(listed.status).toBe(200)
  return listed.body.data
}
/** The paid entry read signed in as the buyer, with no payment: 200 only while a pass (or a purchase) entitles him. */
const readSigned = async (m: Market, buyer: Buyer) =>
  fetch(`${server.url}${m.path.content}`, { headers: await authHeaders(server.url, buyer) })
const errorOf = async (r: Response) => ((await r.json()) as { error: string }).error

/** Nothing of the purchase happened: no row, no pass, the owner paid nothing, the buyer does not read. */
async function expectNothing(m: Market, buyer: Buyer) {
  expect(await passRows(m)).toHaveLength(0)
  expect(await passesOf(buyer)).toHaveLength(0)
  expect(await books(m)).toBe(0n)
  expect((await readSigned(m, buyer)).status).toBe(402)
}

/** One of each: the charge, the ledger row of kind pass, the pass (made by that row), and the buyer reads. */
async function expectOnePass(m: Market, buyer: Buyer) {
  const rows = await passRows(m)
  expect(rows).toHaveLength(1)
  expect(rows[0]).toMatchObject({ kind: 'pass', entry_id: null, feed_id: m.feedId, payer: buyer.address, amount: String(PRICE) })
  const passes = await passesOf(buyer)
  expect(passes).toHaveLength(1)
  expect(passes[0]).toMatchObject({ feed_id: m.feedId, holder: buyer.address, transaction_id: rows[0].id })
  expect(passes[0].expires_at - passes[0].starts_at).toBe(DURATION_S)
  expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
  expect(await books(m)).toBe(PRICE)
  const read = await readSigned(m, buyer)
  expect([read.status, await read.text()]).toEqual([200, SECRET])
  return passes[0]
}

describe('a payer who front-runs his own authorization for a pass', () => {
  test('same nonce, 1 unit to himself, mined just before our settlement: 402, nothing recorded, no pass', async () => {
    const m = await market()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const { honest, sneaky } = await honestAndSneaky(chain, buyer, m.owner.address, PRICE)
    rpc.before('eth_sendRawTransaction', () => submitDirectly(sneaky))
    const reply = await buy(m, v1Header(honest))
    expect(reply.status).toBe(402)
    expect(await errorOf(reply)).toMatch(/^authorization_used_elsewhere/)
    await expectNothing(m, buyer)
  })

  test('cancelAuthorization between verification and settlement: 402 authorization_canceled, no pass', async () => {
    const m = await market()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const auth = await signTransferAuthorization(buyer, { to: m.owner.address, value: PRICE })
    rpc.before('eth_sendRawTransaction', () => cancelDirectly(buyer, auth.authorization.nonce))
    const reply = await buy(m, v1Header(auth))
    expect(reply.status).toBe(402)
    expect(await errorOf(reply)).toMatch(/^authorization_canceled/)
    await expectNothing(m, buyer)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n)
  })
})

describe('one payment for a pass sent twice at once', () => {
  test('eight identical requests: one 201, seven 402 payment_already_settled; one charge, one row, one pass', async () => {
    const m = await market()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: m.owner.address, value: PRICE }))
    const replies = await Promise.all(Array.from({ length: 8 }, () => buy(m, header)))
    expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(402)])
    for (const r of replies.filter((r) => r.status === 402)) expect(await errorOf(r)).toMatch(/^payment_already_settled/)
    const sold = await replies.find((r) => r.status === 201)!.json()
    expect((await expectOnePass(m, buyer)).id).toBe(sold.id)
  })

  test('the same authorization as X-PAYMENT (v1) and PAYMENT-SIGNATURE (v2) at once: one 201, one 402; one pass', async () => {
    const m = await market()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const auth = await signTransferAuthorization(buyer, { to: m.owner.address, value: PRICE })
    const challenge = await fetch(`${server.url}${m.path.pass}`, { method: 'POST' })
    expect(challenge.status).toBe(402)
    const required = JSON.parse(Buffer.from(challenge.headers.get('payment-required')!, 'base64').toString())
    const v2 = encodePaymentHeader({ x402Version: 2, accepted: required.accepts[0], payload: auth })
    const replies = await Promise.all([buy(m, v1Header(auth)), buy(m, v2, {}, 'payment-signature')])
    expect(replies.map((r) => r.status).sort()).toEqual([201, 402])
    expect(await errorOf(replies.find((r) => r.status === 402)!)).toMatch(/^payment_already_settled/)
    await expectOnePass(m, buyer)
  })
})

describe('kill -9 between the settlement of a pass and its recording', () => {
  test('reconciled from the chain at the next start: one row, one pass; the payment again buys nothing more', async () => {
    const m = await market()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: m.owner.address, value: PRICE }))
    await server.restart({ ...env, TRELLIS_TEST_CRASH_AFTER_SETTLE: '1' })
    expect(
      await buy(m, header)
        .then((r) => r.status)
        .catch(() => 'connection lost'),
    ).toBe('connection lost')
    // The transfer happened on chain; the ledger has not seen it yet.
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    await server.restart(env)
    await waitFor('the reconciler to record the pass sale', async () => (await passRows(m)).length === 1)
    const pass = await expectOnePass(m, buyer)
    // The payment header alone is no ticket (anyone can rebuild it from the chain): 402, as for an entry.
    const replay = await buy(m, header)
    expect(replay.status).toBe(402)
    expect(await errorOf(replay)).toMatch(/^payment_already_settled/)
    // Nor is it a ticket to an entry of the same owner and price: it paid for the pass (duplicate_settlement).
    const elsewhere = await fetch(`${server.url}${m.path.content}`, { headers: { 'x-payment': header } })
    expect([elsewhere.status, await errorOf(elsewhere)]).toEqual([402, expect.stringMatching(/^duplicate_settlement/)])
    // The payer signed in presenting it again is answered the pass it bought, not a second one.
    const signedIn = await buy(m, header, await authHeaders(server.url, buyer))
    expect([signedIn.status, ((await signedIn.json()) as { id: string }).id]).toEqual([201, pass.id])
    expect(await expectOnePass(m, buyer)).toEqual(pass)
    expect(await ledgerRows(server.url, `feed_id=${m.feedId}`)).toHaveLength(1)
    expect(await gauge(server.url, 'trellis_pending_payments')).toBe(0)
  })
})

/** When a round kills the server: a moment after the start, or a moment after the k-th settlement was broadcast. */
type Moment = { afterMs: number } | { broadcast: number; afterMs: number }

/**
 * One round: eight buyers pay for the passes of two feeds at once; the server is killed at `moment`. Round 0 runs on
 * the server of the cases above (its verify-ledger covers them too); each later one on a chain and server of its own,
 * as the chain's clock is moved past the authorizations' validBefore to expire those never sent.
 */
async function round(n: number, moment: Moment) {
  if (n > 0) {
    await server.dispose()
    await rpc.stop()
    await chain.stop()
    chain = await startChain()
    rpc = await startRpcProxy(chain.rpcUrl)
    env = { ...chain.env, TRELLIS_RPC_URL: rpc.url, TRELLIS_RECONCILE_S: '1', TRELLIS_LEDGER_CHECK_S: '1' }
    server = await startTestServer(env)
  }
  const markets = [await market(), await market()]
  const buyers: Buyer[] = []
  for (let i = 0; i < 8; i++) buyers.push(await chain.newFundedBuyer(1_000_000n))
  const marketOf = (i: number) => markets[i % 2]!
  const headers = await Promise.all(
    buyers.map((b, i) => v1Payment(b, { to: marketOf(i).owner.address, value: PRICE }).then(encodePaymentHeader)),
  )
  rpc.resetCalls()
  const replies = buyers.map((_, i) =>
    buy(marketOf(i), headers[i]!)
      .then((r) => r.status)
      .catch(() => 'lost'),
  )
  if ('broadcast' in moment) {
    const deadline = Date.now() + 10_000
    while (rpc.callsOf('eth_sendRawTransaction').length < moment.broadcast && Date.now() < deadline) await Bun.sleep(1)
  }
  await Bun.sleep(moment.afterMs)
  await server.kill()
  const statuses = await Promise.all(replies)
  const broadcast = rpc.callsOf('eth_sendRawTransaction').length

  await server.restart(env)
  await chain.testClient.increaseTime({ seconds: 600 })
  await chain.testClient.mine({ blocks: 1 })
  await waitFor('every interrupted payment decided', async () => (await gauge(server.url, 'trellis_pending_payments')) === 0, 30_000)

  for (const m of markets) await books(m)
  let sold = 0
  for (const [i, buyer] of buyers.entries()) {
    const spent = 1_000_000n - (await chain.balanceOf(buyer.address))
    const rows = await ledgerRows(server.url, `payer=${buyer.address}`)
    expect(rows.every((r) => r.kind === 'pass' && r.feed_id === marketOf(i).feedId)).toBe(true)
    expect(spent).toBe(rows.reduce((sum, r) => sum + BigInt(r.amount), 0n))
    expect(rows.length).toBeLessThanOrEqual(1)
    // Every pass sold is held by its payer, and every pass held was sold.
    const passes = await passesOf(buyer)
    expect(passes.map((p) => p.transaction_id)).toEqual(rows.map((r) => r.id))
    // A buyer answered 201 was charged once, recorded once, and holds one pass.
    if (statuses[i] === 201) expect([spent, passes.length]).toEqual([PRICE, 1])
    sold += rows.length
  }
  // Every settlement broadcast is one pass sold; none was sent again after the restart (the chain decided them).
  expect([sold, rpc.callsOf('eth_sendRawTransaction').length]).toEqual([broadcast, broadcast])
  const served = statuses.filter((s) => s === 201).length
  const at = JSON.stringify(moment)
  console.log(`round ${n}: kill -9 at ${at}: ${broadcast} settlements broadcast, ${served} answered 201, ${sold} passes sold in the end`)

  await server.stop()
  // The audit recomputes the passes held and the totals from the ledger; verify-ledger proves every row on chain, and
  // counts the payments still pending in the records.
  expect((await trellis(['verify'], server.dataDir)).json).toMatchObject({ ok: true, integrity: [] })
  const { code, report, stderr } = await verifyLedger(server.dataDir, chain.env)
  expect({ code, stderr: code === 0 ? '' : stderr, problems: report?.problems }).toEqual({ code: 0, stderr: '', problems: [] })
  expect([report.pending, report.proven]).toEqual([0, report.transactions])
}

// Last in this file: it moves the chain's clock forward.
test('kill -9 at a random moment during eight concurrent pass purchases, three times: every spend recorded, every pass held', async () => {
  // A random moment over the purchases (verify, insert, broadcast, record), then twice a few milliseconds after a random
  // one of the eight settlements was broadcast (settled on chain, not yet recorded); printed, to replay a failure.
  const random = (below: number) => Math.floor(Math.random() * below)
  await round(0, { afterMs: 10 + random(200) })
  for (const n of [1, 2]) await round(n, { broadcast: 1 + random(8), afterMs: random(30) })
}, 90_000)
