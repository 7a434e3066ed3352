// Payments under attack, on a real chain behind a fault-injecting RPC proxy: a payer who front-runs his own
// authorization, a third party who replays a settled one rebuilt from the public ledger, an RPC that fails after
// broadcasting, a facilitator that lies. After every case the owner's on-chain balance moved by exactly the sum of
// the owner's new ledger rows, and nobody got bytes they did not pay for. One suite, run on a server's only network
// (payments-hostile.test.ts) and on the second of two (payments-hostile-second-network.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { decodeFunctionData, parseTransaction, serializeSignature, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestServer, type TestServer } from '../../dev/server.ts'
import { authHeaders, b64, createEntry, createFeed, newWallet, type Wallet } from '../../dev/api.ts'
import { devKey, encodePaymentHeader, usdcAbi, type Buyer, type TestChain } from '../../dev/chain.ts'
import { startRpcProxy, type RpcProxy } from './rpc-proxy.ts'
import { frontRunner, honestAndSneaky, v1Header, type FrontRunner } from './front-run.ts'
import { startFacilitator } from './facilitator.ts'
import { expectBooksBalanced, gauge, ledgerRows, verifyLedger, waitFor } from './ledger.ts'

const PRICE = 10_000n
const SECRET = 'paid bytes'

/** Where the attacks happen: the chain attacked, and the servers selling there. */
export interface HostileStage {
  /** The chain attacked. */
  chain: TestChain
  /** Other chains the servers sell on (stopped with the suite). */
  others: TestChain[]
  /** A server's environment, given the attacked network's settings (its `env`, with the RPC or settlement changed). */
  serverEnv(settings: Record<string, string>): Record<string, string>
}

export function hostilePayments(label: string, setUp: () => Promise<HostileStage>) {
  let stage: HostileStage
  let chain: TestChain
  let rpc: RpcProxy
  let server: TestServer
  let remote: TestServer
  let facilitator: ReturnType<typeof startFacilitator>
  let submitDirectly: FrontRunner['submitDirectly']
  let cancelDirectly: FrontRunner['cancelDirectly']
  const jobs = { TRELLIS_RECONCILE_S: '1', TRELLIS_CONFIRM_TIMEOUT_S: '2', TRELLIS_LEDGER_CHECK_S: '1' }
  /** The attacked network's settings, reached through the proxy, settled by the facilitator at `url`. */
  const settlingBy = (url: string) => ({
    ...chain.env,
    TRELLIS_RPC_URL: rpc.url,
    TRELLIS_SETTLEMENT: 'facilitator',
    TRELLIS_RELAYER_KEY: '',
    TRELLIS_FACILITATOR_URL: url,
  })

  beforeAll(async () => {
    stage = await setUp()
    chain = stage.chain
    rpc = await startRpcProxy(chain.rpcUrl)
    facilitator = startFacilitator(chain, devKey(4))
    server = await startTestServer({ ...stage.serverEnv({ ...chain.env, TRELLIS_RPC_URL: rpc.url }), ...jobs })
    remote = await startTestServer({ ...stage.serverEnv(settlingBy(facilitator.url)), ...jobs })
    ;({ submitDirectly, cancelDirectly } = frontRunner(chain))
  })
  afterAll(async () => {
    await server?.dispose()
    await remote?.dispose()
    facilitator?.stop()
    await rpc?.stop()
    await Promise.all([chain, ...(stage?.others ?? [])].map((one) => one?.stop()))
  })

  /** A fresh owner with one paid entry on `on`, and the owner's balance before anything happened. */
  async function market(on: TestServer = server) {
    const owner = newWallet()
    const feed = await createFeed(on.url, owner)
    const entry = await createEntry(on.url, owner, feed.id, {
      content_base64: b64(SECRET),
      is_free: false,
      price: { amount: String(PRICE) },
    })
    const content = `${on.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
    return { owner, feed, entry, content, json: content.slice(0, -'/content'.length), before: await chain.balanceOf(owner.address) }
  }
  type Market = Awaited<ReturnType<typeof market>>

  const pay = (url: string, header: string, extra: Record<string, string> = {}) =>
    fetch(url, { headers: { 'x-payment': header, ...extra } })
  const entryRows = (on: TestServer, m: Market) => ledgerRows(on.url, `entry_id=${m.entry.id}`)
  const books = (on: TestServer, m: Market) => expectBooksBalanced(on.url, chain.balanceOf, m.owner.address, m.before)

  /** The bytes were not handed out: not to the payment, not to the payer signed in. */
  async function expectNotEntitled(m: Market, buyer: Buyer) {
    const signedIn = await fetch(m.content, { headers: await authHeaders(server.url, buyer as unknown as Wallet) })
    expect(signedIn.status).toBe(402)
  }

  describe(`${label}: a payer who front-runs his own authorization`, () => {
    test('same nonce, 1 unit to himself, mined just before our settlement: 402, nothing recorded, owner paid nothing', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const { honest, sneaky } = await honestAndSneaky(chain, buyer, m.owner.address, PRICE)
      rpc.before('eth_sendRawTransaction', () => submitDirectly(sneaky))
      const reply = await pay(m.content, v1Header(honest, chain.network))
      expect(reply.status).toBe(402)
      expect((await reply.json()).error).toMatch(/^authorization_used_elsewhere/)
      expect(await entryRows(server, m)).toHaveLength(0)
      expect(await books(server, m)).toBe(0n)
      await expectNotEntitled(m, buyer)
    })

    test('the same trick in facilitator mode', async () => {
      const m = await market(remote)
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const { honest, sneaky } = await honestAndSneaky(chain, buyer, m.owner.address, PRICE)
      // Mined after the facilitator verified, before it settles.
      facilitator.behave({ settle: true, before: () => submitDirectly(sneaky), answer: (settled) => Response.json(settled) })
      try {
        const reply = await pay(m.content, v1Header(honest, chain.network))
        expect(reply.status).toBe(402)
        expect((await reply.json()).error).toMatch(/^authorization_used_elsewhere/)
      } finally {
        facilitator.behave({ settle: true, answer: (settled) => Response.json(settled) })
      }
      expect(await entryRows(remote, m)).toHaveLength(0)
      expect(await books(remote, m)).toBe(0n)
    })

    test('cancelAuthorization between verification and settlement: 402 authorization_canceled, nothing recorded', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const auth = await chain.sign(buyer, { to: m.owner.address, value: PRICE })
      rpc.before('eth_sendRawTransaction', () => cancelDirectly(buyer, auth.authorization.nonce))
      const reply = await pay(m.content, v1Header(auth, chain.network))
      expect(reply.status).toBe(402)
      expect((await reply.json()).error).toMatch(/^authorization_canceled/)
      expect(await entryRows(server, m)).toHaveLength(0)
      expect(await books(server, m)).toBe(0n)
    })

    test('cancelled before it is presented: refused at verification', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const auth = await chain.sign(buyer, { to: m.owner.address, value: PRICE })
      await cancelDirectly(buyer, auth.authorization.nonce)
      const reply = await pay(m.content, v1Header(auth, chain.network))
      expect(reply.status).toBe(402)
      expect((await reply.json()).error).toMatch(/nonce|used/)
      expect(await books(server, m)).toBe(0n)
    })
  })

  describe(`${label}: a third party replaying a settled payment`, () => {
    test('rebuilt from the public ledger and the calldata: no bytes, no content_url, for v1 and v2, signed in or not', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      expect((await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))).status).toBe(
        200,
      )

      const [row] = await entryRows(server, m)
      const tx = await chain.publicClient.getTransaction({ hash: row.transaction_hash })
      const { args } = decodeFunctionData({ abi: usdcAbi, data: tx.input })
      const [from, to, value, validAfter, validBefore, nonce, ...sig] = args as unknown as [
        Address,
        Address,
        bigint,
        bigint,
        bigint,
        Hex,
        ...unknown[],
      ]
      const signature =
        sig.length === 1 ? (sig[0] as Hex) : serializeSignature({ v: BigInt(sig[0] as number), r: sig[1] as Hex, s: sig[2] as Hex })
      const authorization = { from, to, value: String(value), validAfter: String(validAfter), validBefore: String(validBefore), nonce }
      const v1 = v1Header({ authorization, signature }, chain.network)
      const challenge = JSON.parse(Buffer.from((await fetch(m.content)).headers.get('payment-required')!, 'base64').toString())
      const v2 = encodePaymentHeader({
        x402Version: 2,
        accepted: challenge.accepts.find((one: any) => one.network === `eip155:${chain.chainId}`),
        payload: { authorization, signature },
      })

      const mallory = newWallet()
      for (const [name, header] of [
        ['x-payment', v1],
        ['payment-signature', v2],
      ] as const) {
        for (const url of [m.content, m.json]) {
          const anonymous = await fetch(url, { headers: { [name]: header } })
          expect(anonymous.status).toBe(402)
          const body = await anonymous.json()
          expect(body.error).toMatch(/^payment_already_settled/)
          expect(JSON.stringify(body)).not.toContain('content_url')
          const signedIn = await fetch(url, { headers: { [name]: header, ...(await authHeaders(server.url, mallory)) } })
          expect(signedIn.status).toBe(402)
        }
      }
      // The payer, signed in, reads it.
      expect(await (await fetch(m.content, { headers: await authHeaders(server.url, buyer as unknown as Wallet) })).text()).toBe(SECRET)
      expect(await entryRows(server, m)).toHaveLength(1)
      expect(await books(server, m)).toBe(PRICE)
    })
  })

  describe(`${label}: an RPC that fails mid-way`, () => {
    test('receipt unreadable after broadcast, block mined late: 503 pending, then recorded once the chain shows it', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const header = encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE }))
      await chain.testClient.setAutomine(false)
      try {
        rpc.fail('eth_getTransactionReceipt')
        const reply = await pay(m.content, header)
        expect(reply.status).toBe(503)
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0)
        expect((await reply.json()).code).toBe('PAYMENT_PENDING')
        expect((await pay(m.content, header)).status).toBe(503) // the same payment again: still pending, never sent twice
        expect(await entryRows(server, m)).toHaveLength(0)
        expect(await gauge(server.url, 'trellis_pending_payments')).toBeGreaterThan(0)
        await chain.testClient.mine({ blocks: 1 })
      } finally {
        await chain.testClient.setAutomine(true)
        rpc.heal()
      }
      await waitFor('the reconciler to record the late transfer', async () => (await entryRows(server, m)).length === 1)
      expect(await books(server, m)).toBe(PRICE)
      expect(rpc.callsOf('eth_sendRawTransaction').length).toBeGreaterThan(0)
      // The payment header alone still is no ticket; the payer signed in is entitled.
      expect((await pay(m.content, header)).status).toBe(402)
      expect(await (await fetch(m.content, { headers: await authHeaders(server.url, buyer as unknown as Wallet) })).text()).toBe(SECRET)
    })

    test('a second authorization while the first for the same entry is pending: 503, never sent, one purchase in the end', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const first = encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE }))
      const second = await chain.payment(buyer, { to: m.owner.address, value: PRICE })
      await chain.testClient.setAutomine(false)
      try {
        rpc.fail('eth_getTransactionReceipt')
        expect((await pay(m.content, first)).status).toBe(503)
        const sent = rpc.callsOf('eth_sendRawTransaction').length
        const reply = await pay(m.content, encodePaymentHeader(second))
        expect(reply.status).toBe(503)
        const body = await reply.json()
        expect(body.code).toBe('PAYMENT_PENDING')
        expect(JSON.stringify(body)).toContain('another payment from this wallet for this entry is being settled')
        expect(rpc.callsOf('eth_sendRawTransaction').length).toBe(sent) // the second was never sent
        await chain.testClient.mine({ blocks: 1 })
      } finally {
        await chain.testClient.setAutomine(true)
        rpc.heal()
      }
      await waitFor('the reconciler to record the first payment', async () => (await entryRows(server, m)).length === 1)
      // The entry is bought: the second authorization is served without being charged, and stays unused on chain.
      const again = await pay(m.content, encodePaymentHeader(second))
      expect(again.status).toBe(200)
      expect(await again.text()).toBe(SECRET)
      expect(await chain.authorizationState(buyer.address, second.payload.authorization.nonce as Hex)).toBe(false)
      expect(await entryRows(server, m)).toHaveLength(1)
      expect(await books(server, m)).toBe(PRICE)
    })

    test('a broadcast the node refuses leaves no nonce gap: four buyers at once, the lowest nonce refused; the others settle', async () => {
      const relayer = privateKeyToAccount(chain.env.TRELLIS_RELAYER_KEY as Hex).address
      const next = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' })
      // The node refuses the first transaction of the relayer's next nonce: never broadcast, so that nonce stays free.
      rpc.fail('eth_sendRawTransaction', {
        times: 1,
        rpcError: { code: -32000, message: 'refused by the test' },
        when: (params) => parseTransaction(params[0] as Hex).nonce === next,
      })
      const buyers = await Promise.all([0, 1, 2, 3].map(() => chain.newFundedBuyer(1_000_000n)))
      const markets = await Promise.all(buyers.map(() => market()))
      const headers = await Promise.all(
        buyers.map(async (buyer, i) => encodePaymentHeader(await chain.payment(buyer, { to: markets[i]!.owner.address, value: PRICE }))),
      )
      const started = performance.now()
      const statuses = await Promise.all(markets.map(async (m, i) => (await pay(m.content, headers[i]!)).status))
      // One was refused by the node (not taken, or pending until the chain says it was not); every other is served, at
      // once: none waits out its receipt (2 s here) behind a nonce a refused transaction never used.
      expect(statuses.filter((status) => status === 200)).toHaveLength(3)
      expect(performance.now() - started).toBeLessThan(2_000)
      rpc.heal()
    })

    test('a facilitator that settles, then fails to answer: found by bounded log searches from the submission block', async () => {
      const m = await market(remote)
      const buyer = await chain.newFundedBuyer(1_000_000n)
      facilitator.behave({ settle: true, answer: () => new Response('bad gateway', { status: 502 }) })
      const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
      rpc.fail('eth_getLogs') // the chain cannot tell yet either
      const reply = await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))
      expect(reply.status).toBe(503)
      expect(await entryRows(remote, m)).toHaveLength(0)
      // A long way from the settlement (mining is slow past a few hundred blocks at once), logs capped like a public RPC.
      for (let i = 0; i < 3; i++) await chain.testClient.mine({ blocks: 200 })
      rpc.heal()
      rpc.resetCalls()
      rpc.maxLogRange(50)
      try {
        await waitFor('the reconciler to find the settlement', async () => (await entryRows(remote, m)).length === 1, 30_000)
      } finally {
        rpc.heal()
        facilitator.behave({ settle: true, answer: (settled) => Response.json(settled) })
      }
      expect(await books(remote, m)).toBe(PRICE)
      expect((await fetch(m.content, { headers: await authHeaders(remote.url, buyer as unknown as Wallet) })).status).toBe(200)
      // This payment's searches (the server's other jobs search for other authorizations through the same proxy).
      const mine = rpc
        .callsOf('eth_getLogs')
        .map((c) => c.params[0] as { fromBlock: Hex; toBlock: Hex; topics: unknown[] })
        .filter((f) => JSON.stringify(f.topics).toLowerCase().includes(buyer.address.slice(2).toLowerCase()))
      expect(mine.length).toBeGreaterThan(1)
      // From the submission block, not a fixed lookback.
      for (const f of mine) expect(BigInt(f.fromBlock)).toBeGreaterThanOrEqual(head - 10n)
      // Refused ranges were halved until the RPC accepted one (the settlement sits right after the submission block).
      const spans = mine.map((f) => BigInt(f.toBlock) - BigInt(f.fromBlock) + 1n)
      expect(spans[0]).toBeGreaterThan(50n)
      expect(spans.filter((n) => n <= 50n).length).toBeGreaterThan(0)
    })
  })

  describe(`${label}: a facilitator that lies`, () => {
    test('a facilitator that settles, then fails to answer, while the chain is readable: the chain decides at once', async () => {
      const m = await market(remote)
      const buyer = await chain.newFundedBuyer(1_000_000n)
      facilitator.behave({ settle: true, answer: () => new Response('bad gateway', { status: 502 }) })
      try {
        const reply = await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))
        expect(reply.status).toBe(200)
        expect(await reply.text()).toBe(SECRET)
      } finally {
        facilitator.behave({ settle: true, answer: (settled) => Response.json(settled) })
      }
      expect(await entryRows(remote, m)).toHaveLength(1)
      expect(await books(remote, m)).toBe(PRICE)
    })

    test('success with a hash that is not on chain: not served, not recorded, owner paid nothing', async () => {
      const m = await market(remote)
      const buyer = await chain.newFundedBuyer(1_000_000n)
      facilitator.behave({
        settle: false,
        answer: (_, body) =>
          Response.json({
            success: true,
            transaction: generatePrivateKey(),
            network: chain.network,
            payer: body.paymentPayload.payload.authorization.from,
          }),
      })
      try {
        const reply = await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))
        expect(reply.status).toBe(503)
        expect(await reply.text()).not.toContain(SECRET)
      } finally {
        facilitator.behave({ settle: true, answer: (settled) => Response.json(settled) })
      }
      expect(await entryRows(remote, m)).toHaveLength(0)
      expect(await books(remote, m)).toBe(0n)
    })

    test('success with the hash of another, real transfer: the real settlement is found and recorded under its own hash', async () => {
      const m = await market(remote)
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const decoy = await chain.fundBuyer(newWallet().address, 1n)
      facilitator.behave({ settle: true, answer: (settled) => Response.json({ ...settled, transaction: decoy }) })
      try {
        const reply = await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))
        expect(reply.status).toBe(200)
        const settlement = JSON.parse(Buffer.from(reply.headers.get('x-payment-response')!, 'base64').toString())
        expect(settlement.transaction).not.toBe(decoy)
        const [row] = await entryRows(remote, m)
        expect(row.transaction_hash).toBe(settlement.transaction)
      } finally {
        facilitator.behave({ settle: true, answer: (settled) => Response.json(settled) })
      }
      expect(await books(remote, m)).toBe(PRICE)
    })

    test('an unreachable facilitator: 502 PAYMENT_BACKEND_UNAVAILABLE, the cause logged, nothing charged', async () => {
      const down = await startTestServer(stage.serverEnv(settlingBy('http://127.0.0.1:9')))
      try {
        const start = JSON.parse(down.logs.find((l) => l.includes('"listening"'))!)
        const said = [start, ...(start.networks ?? [])].find((one) => one.network === chain.network)
        expect(said).toMatchObject({
          settlement: 'facilitator',
          network: chain.network,
          token: chain.usdc,
          facilitator: 'http://127.0.0.1:9',
        })
        const m = await market(down)
        const buyer = await chain.newFundedBuyer(1_000_000n)
        const reply = await pay(m.content, encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE })))
        expect(reply.status).toBe(502)
        expect((await reply.json()).code).toBe('PAYMENT_BACKEND_UNAVAILABLE')
        // The line is logged while the request is handled: it carries the request's id, as the answer does. (The test
        // reads the server's output through a pipe, which may bring it a moment after the answer.)
        const causeLine = () => down.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'payment backend unavailable')
        await waitFor('the cause logged', async () => causeLine() !== undefined, 5_000)
        const cause = causeLine()
        expect(cause.cause).toContain('facilitator:')
        expect(cause.request_id).toBe(reply.headers.get('x-request-id'))
        expect(await books(down, m)).toBe(0n)
      } finally {
        await down.dispose()
      }
    })
  })

  describe(`${label}: authorizations that live too long`, () => {
    test('validBefore a year ahead is refused before anything is sent', async () => {
      const m = await market()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const now = BigInt(Math.floor(Date.now() / 1000))
      rpc.resetCalls()
      const reply = await pay(
        m.content,
        encodePaymentHeader(await chain.payment(buyer, { to: m.owner.address, value: PRICE, validBefore: now + 365n * 86400n })),
      )
      expect(reply.status).toBe(402)
      expect((await reply.json()).error).toMatch(/valid_before: validBefore may be at most \d+ s ahead/)
      // Background jobs (reconciliation, the ledger check) may read the chain meanwhile; nothing may concern this buyer.
      expect(rpc.calls.filter((c) => JSON.stringify(c.params).toLowerCase().includes(buyer.address.slice(2).toLowerCase()))).toEqual([])
      expect(rpc.callsOf('eth_sendRawTransaction')).toEqual([])
      expect(await books(server, m)).toBe(0n)
    })
  })

  describe(`${label}: the ledger equals the chain`, () => {
    // Last in this file: it moves the chain's clock forward.
    test('pending payments expire by chain time; verify-ledger and the check job find nothing wrong', async () => {
      const now = await chain.now()
      await chain.testClient.increaseTime({ seconds: 3600 })
      await chain.testClient.mine({ blocks: 1 })
      expect(await chain.now()).toBeGreaterThan(now + 3000n)
      for (const on of [server, remote]) {
        await waitFor('no pending payment', async () => (await gauge(on.url, 'trellis_pending_payments')) === 0)
        await waitFor('a ledger check', async () =>
          (await fetch(`${on.url}/metrics`).then((r) => r.text())).includes('trellis_ledger_problems 0'),
        )
        const { code, report, stderr } = await verifyLedger(on.dataDir, stage.serverEnv(chain.env))
        expect({ code, stderr: code === 0 ? '' : stderr, problems: report?.problems }).toEqual({ code: 0, stderr: '', problems: [] })
        expect(report.pending).toBe(0)
        expect(report.proven).toBe(report.transactions)
      }
    })
  })
}
