// Paid entries on a real local chain (anvil + the EIP-3009 test USDC), bought with the official x402 clients and
// with hand-built payment headers for every failure case. Balances are read on chain, rows from the ledger API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createWalletClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { wrapFetchWithPayment as wrapFetchV1, decodeXPaymentResponse } from 'x402-fetch'
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch'
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { startFacilitator } from './helpers/facilitator.ts'

const PRICE = 10_000n // 0.01 USDC

let chain: TestChain
let server: TestServer
let creator: Wallet
let feed: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'paid things' })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const paidEntry = (body: Record<string, unknown> = {}) =>
  createEntry(server.url, creator, feed.id, {
    content_base64: b64('the good stuff'),
    title: 'Paid',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
    ...body,
  })
const contentUrl = (entry: any) => `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
const entryUrl = (entry: any) => `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}`
const ledgerFor = async (entryId: string) => (await call(server.url, 'GET', `/v1/transactions?entry_id=${entryId}`)).body
const payWith = (url: string, header: string, name = 'x-payment') => fetch(url, { headers: { [name]: header } })
const decodeHeader = (value: string | null) => JSON.parse(Buffer.from(value!, 'base64').toString())

describe('buying with the official clients', () => {
  test('x402-fetch (v1) buys the content: 200, X-PAYMENT-RESPONSE, funds moved once, one ledger row, buyer entitled', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const wallet = createWalletClient({ account: buyer, chain: chain.chain, transport: http(chain.rpcUrl) })
    const fetchWithPay = wrapFetchV1(fetch, wallet as never)

    const started = performance.now()
    const response = await fetchWithPay(contentUrl(entry))
    const paidMs = performance.now() - started
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('the good stuff')
    const settlement = decodeXPaymentResponse(response.headers.get('x-payment-response')!)
    expect(settlement).toMatchObject({ success: true, network: 'base-sepolia', payer: buyer.address })
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    console.log(`paid GET via x402-fetch (402 → paid 200): ${paidMs.toFixed(1)} ms`)

    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PRICE)
    expect(await chain.balanceOf(creator.address)).toBe(before.creator + PRICE)

    const ledger = await ledgerFor(entry.id)
    expect(ledger.transactions).toHaveLength(1)
    expect(ledger.pagination.total_count).toBe(1)
    const row = ledger.transactions[0]
    expect(row).toEqual({
      id: expect.stringMatching(/^tx_[0-9a-f-]{36}$/),
      payer: buyer.address,
      pay_to: creator.address,
      amount: String(PRICE),
      asset: 'USDC',
      entry_id: entry.id,
      transaction_hash: settlement.transaction,
      created_at: expect.any(Number),
      kind: 'entry',
      feed_id: feed.id,
      network: 'base-sepolia',
    })
    const byHash = await call(server.url, 'GET', `/v1/transactions/hash/${settlement.transaction}`)
    expect(byHash.body).toEqual({ ...row, piid: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    // The operator's trail: one info line per settled payment, with entry, payer, amount and transaction.
    const settledLines = () =>
      server.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'payment settled' && line.entry === entry.id)
    for (let i = 0; i < 50 && settledLines().length === 0; i++) await Bun.sleep(20) // stdout arrives through a pipe
    expect(settledLines()).toEqual([
      expect.objectContaining({
        level: 'info',
        entry: entry.id,
        payer: buyer.address,
        pay_to: creator.address,
        amount: String(PRICE),
        transaction: settlement.transaction,
      }),
    ])
    const byId = await call(server.url, 'GET', `/v1/transactions/${row.id}`)
    expect(byId.body).toEqual(byHash.body)
    expect((await call(server.url, 'GET', `/v1/transactions/${row.id.slice(3)}`)).body).toEqual(byHash.body)

    const updated = (await call(server.url, 'GET', entryUrl(entry).slice(server.url.length), { wallet: creator })).body
    expect(updated).toMatchObject({ total_purchases: 1, total_revenue: String(PRICE) })
    const payerWallet = await call(server.url, 'GET', `/v1/wallets/address/${buyer.address}`)
    expect(payerWallet.status).toBe(200)

    // The buyer, signed in, reads again without paying.
    const again = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}/content`, { wallet: buyer as unknown as Wallet })
    expect(again.status).toBe(200)
    expect(again.text).toBe('the good stuff')
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PRICE)
  })

  test('@x402/fetch (v2) buys the entry JSON through PAYMENT-REQUIRED / PAYMENT-SIGNATURE', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const client = new x402Client()
    registerClientScheme(client, { signer: toClientEvmSigner(buyer as never) })
    const fetchWithPay = wrapFetchV2(fetch, client)
    const response = await fetchWithPay(entryUrl(entry))
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body).toMatchObject({ id: entry.id, is_free: false, price: String(PRICE) })
    expect((await fetch(body.content_url)).status).toBe(200)
    const settlement = decodeHeader(response.headers.get('payment-response'))
    expect(settlement).toMatchObject({ success: true, network: 'eip155:84532', payer: buyer.address })
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
  })

  test('the owner and past buyers are never charged, even when a payment is attached', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const first = await payWith(contentUrl(entry), encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })))
    expect(first.status).toBe(200)
    // Signed in with a fresh payment attached: served, nothing settled.
    const second = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
    const served = await fetch(contentUrl(entry), { headers: { ...(await authHeaders(server.url, buyer as never)), 'x-payment': second } })
    expect(served.status).toBe(200)
    // Not signed in, but the payment proves who they are: served without a second charge.
    const unsigned = await payWith(contentUrl(entry), second)
    expect(unsigned.status).toBe(200)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    const owner = await fetch(contentUrl(entry), { headers: { ...(await authHeaders(server.url, creator)), 'x-payment': second } })
    expect(owner.status).toBe(200)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    // The owner paying itself, unsigned: served, nothing settled, no wash purchase in the ledger.
    const selfPayer = await chain.newFundedBuyer(1_000_000n)
    const selfFeed = await createFeed(server.url, selfPayer as never)
    const selfEntry = await createEntry(server.url, selfPayer as never, selfFeed.id, { is_free: false, price: { amount: String(PRICE) } })
    const self = await payWith(
      `${server.url}/v1/feeds/${selfFeed.id}/entries/${selfEntry.id}/content`,
      encodePaymentHeader(await v1Payment(selfPayer, { to: selfPayer.address, value: PRICE })),
    )
    expect(self.status).toBe(200)
    expect(await chain.balanceOf(selfPayer.address)).toBe(1_000_000n)
    expect((await ledgerFor(selfEntry.id)).transactions).toHaveLength(0)
  })
})

describe('a browser session reads what its wallet may read', () => {
  // The hot route answers a session's read of small paid bytes once it knows the session and the purchase
  // (routes/hot-session-content.ts); the same URL with an unknown query parameter is always Elysia's. Both must agree.
  const headersOf = (reply: Response) => {
    const all: string[][] = []
    reply.headers.forEach((value, name) => void (name !== 'x-request-id' && name !== 'date' && all.push([name, value])))
    return all.sort()
  }
  const sessionOf = async (wallet: Wallet) => {
    const opened = await fetch(`${server.url}/v1/auth/session`, { method: 'POST', headers: await authHeaders(server.url, wallet) })
    expect(opened.status).toBe(200)
    return opened.headers.getSetCookie()[0]!.split(';')[0]!
  }
  const bothPaths = async (url: string, cookie: string) => {
    for (let i = 0; i < 3; i++) await (await fetch(url, { headers: { cookie } })).arrayBuffer() // known and prepared by now
    await Bun.sleep(50)
    const fast = await fetch(url, { headers: { cookie } })
    const slow = await fetch(`${url}?unrelated=1`, { headers: { cookie } })
    return {
      fast: { status: fast.status, headers: headersOf(fast), body: await fast.text() },
      slow: { status: slow.status, headers: headersOf(slow), body: await slow.text() },
    }
  }

  test("the owner's and a past buyer's session get the bytes, the same on both paths; another wallet's and an ended one pay", async () => {
    const text = 'paid words for session readers'
    const entry = await paidEntry({ content_base64: b64(text), mime_type: 'text/plain' })
    const buyer = await chain.newFundedBuyer(1_000_000n)
    expect(
      (await payWith(contentUrl(entry), encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })))).status,
    ).toBe(200)
    const readers = { owner: await sessionOf(creator), buyer: await sessionOf(buyer as never) }
    for (const [who, cookie] of Object.entries(readers)) {
      const { fast, slow } = await bothPaths(contentUrl(entry), cookie)
      expect([fast.status, fast.body], who).toEqual([200, text])
      expect(fast, who).toEqual(slow)
      expect(fast.headers.find(([name]) => name === 'cache-control')?.[1], who).toBe('private, max-age=300')
    }
    const stranger = await bothPaths(contentUrl(entry), await sessionOf(newWallet()))
    expect([stranger.fast.status, stranger.slow.status]).toEqual([402, 402])
    // Signed out: the kept cookie opens nothing, on the hot path either.
    expect((await fetch(`${server.url}/v1/auth/session`, { method: 'DELETE', headers: { cookie: readers.buyer } })).status).toBe(204)
    const ended = await bothPaths(contentUrl(entry), readers.buyer)
    expect([ended.fast.status, ended.slow.status]).toEqual([402, 402])
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
  })
})

describe('refused payments: 402 with a reason, nothing moves, nothing recorded', () => {
  const cases: [string, (buyer: any, entry: any) => Promise<string>, RegExp][] = [
    [
      'wrong amount',
      async (b) => encodePaymentHeader(await v1Payment(b, { to: creator.address, value: PRICE - 1n })),
      /authorization_value/,
    ],
    [
      'overpayment',
      async (b) => encodePaymentHeader(await v1Payment(b, { to: creator.address, value: PRICE + 1n })),
      /authorization_value/,
    ],
    ['wrong payTo', async (b) => encodePaymentHeader(await v1Payment(b, { to: newWallet().address, value: PRICE })), /recipient_mismatch/],
    [
      'wrong asset (signed for another token)',
      async (b) =>
        encodePaymentHeader(
          await v1Payment(b, {
            to: creator.address,
            value: PRICE,
            domain: { verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
          }),
        ),
      /signature/,
    ],
    [
      'wrong network',
      async (b) => encodePaymentHeader(await v1Payment(b, { to: creator.address, value: PRICE, network: 'base' })),
      /invalid_network/,
    ],
    [
      'expired',
      async (b) => {
        const now = BigInt(Math.floor(Date.now() / 1000))
        return encodePaymentHeader(
          await v1Payment(b, { to: creator.address, value: PRICE, validAfter: now - 600n, validBefore: now - 10n }),
        )
      },
      /valid_before/,
    ],
    [
      'not yet valid',
      async (b) => {
        const now = BigInt(Math.floor(Date.now() / 1000))
        return encodePaymentHeader(
          await v1Payment(b, { to: creator.address, value: PRICE, validAfter: now + 600n, validBefore: now + 900n }),
        )
      },
      /valid_after/,
    ],
    [
      'bad signature (signed by someone else)',
      async (b) => {
        const payment = await v1Payment(privateKeyToAccount(generatePrivateKey()), { to: creator.address, value: PRICE })
        payment.payload.authorization.from = b.address
        return encodePaymentHeader(payment)
      },
      /signature/,
    ],
    ['not base64 JSON', async () => '%%%', /invalid_payload/],
    [
      'wrong scheme',
      async (b) => encodePaymentHeader({ ...(await v1Payment(b, { to: creator.address, value: PRICE })), scheme: 'upto' }),
      /invalid_scheme/,
    ],
  ]

  for (const [name, build, reason] of cases) {
    test(name, async () => {
      const entry = await paidEntry()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const response = await payWith(contentUrl(entry), await build(buyer, entry))
      expect(response.status).toBe(402)
      const body = await response.json()
      expect(body.x402Version).toBe(1)
      expect(body.error).toMatch(reason)
      expect(body.error).not.toContain('\n')
      expect(body.accepts[0].maxAmountRequired).toBe(String(PRICE))
      expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n)
      expect((await ledgerFor(entry.id)).transactions).toHaveLength(0)
    })
  }

  test('insufficient balance', async () => {
    const entry = await paidEntry()
    const poor = await chain.newFundedBuyer(PRICE - 1n)
    const response = await payWith(contentUrl(entry), encodePaymentHeader(await v1Payment(poor, { to: creator.address, value: PRICE })))
    expect(response.status).toBe(402)
    expect((await response.json()).error).toMatch(/insufficient_balance|exceeds_balance/)
    expect(await chain.balanceOf(poor.address)).toBe(PRICE - 1n)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(0)
  })
})

describe('exactly once', () => {
  test('replay: the same payment again is not a ticket (402), the payer signed in reads; for another entry it is refused', async () => {
    const entry = await paidEntry()
    const other = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
    const first = await payWith(contentUrl(entry), header)
    expect(first.status).toBe(200)
    const replay = await payWith(contentUrl(entry), header)
    expect(replay.status).toBe(402)
    expect((await replay.json()).error).toMatch(/^payment_already_settled: .*sign in as the payer/)
    const signedIn = await fetch(contentUrl(entry), {
      headers: { ...(await authHeaders(server.url, buyer as never)), 'x-payment': header },
    })
    expect(signedIn.status).toBe(200)
    expect(await signedIn.text()).toBe('the good stuff')
    const elsewhere = await payWith(contentUrl(other), header)
    expect(elsewhere.status).toBe(402)
    expect((await elsewhere.json()).error).toMatch(/duplicate_settlement/)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    expect((await ledgerFor(other.id)).transactions).toHaveLength(0)
  })

  test('concurrent double submit: eight identical requests, one settlement, one row, one request served', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
    const replies = await Promise.all(Array.from({ length: 8 }, () => payWith(contentUrl(entry), header)))
    expect(replies.map((r) => r.status).sort()).toEqual([200, ...Array(7).fill(402)])
    const served = replies.find((r) => r.status === 200)!
    expect(await served.text()).toBe('the good stuff')
    for (const r of replies.filter((r) => r.status === 402)) expect((await r.json()).error).toMatch(/^payment_already_settled/)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`, { wallet: creator })).body.total_purchases).toBe(1)
  })

  test('two different payments for one entry by one buyer at once: charged once', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const headers = await Promise.all(
      [1, 2].map(async () => encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))),
    )
    const replies = await Promise.all(headers.map((h) => payWith(contentUrl(entry), h)))
    expect(replies.every((r) => r.status === 200)).toBe(true)
    expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
  })

  test(
    'chain unreachable: 502 PAYMENT_BACKEND_UNAVAILABLE, logged, nothing recorded; once it is back ' + 'the same payment goes through',
    async () => {
      const entry = await paidEntry()
      const buyer = await chain.newFundedBuyer(1_000_000n)
      await chain.restart() // persist state (the funded buyer) before the outage
      const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
      await chain.kill()
      try {
        const logged = server.logs.length
        const refused = await payWith(contentUrl(entry), header)
        expect(refused.status).toBe(502)
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
        const body = await refused.json()
        expect(body.code).toBe('PAYMENT_BACKEND_UNAVAILABLE')
        expect(body.details).toMatch(/^payment_backend_unavailable: [^\n]*nothing was charged/)
        expect(server.logs.slice(logged).some((l) => l.includes('payment backend unavailable') && l.includes('"cause"'))).toBe(true)
        expect((await ledgerFor(entry.id)).transactions).toHaveLength(0)
      } finally {
        await chain.restart()
      }
      const paid = await payWith(contentUrl(entry), header)
      expect(paid.status).toBe(200)
      expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
      expect((await ledgerFor(entry.id)).transactions).toHaveLength(1)
    },
  )

  test('kill -9 between settlement and recording: reconciled from the chain at the next start', async () => {
    const entry = await paidEntry()
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
    await server.restart({ ...chain.env, TRELLIS_TEST_CRASH_AFTER_SETTLE: '1' })
    const crashed = await payWith(contentUrl(entry), header).then(
      (r) => r.status,
      () => 'connection lost',
    )
    expect(crashed).toBe('connection lost')
    // The transfer happened on chain, the ledger has not seen it yet.
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    await server.restart(chain.env)
    let rows: any[] = []
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      rows = (await ledgerFor(entry.id)).transactions
      if (rows.length === 0) await Bun.sleep(100)
    }
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ payer: buyer.address, pay_to: creator.address, amount: String(PRICE), entry_id: entry.id })
    // Entitled when signed in; the payment header alone is no ticket (anyone can rebuild it from the chain).
    expect((await payWith(contentUrl(entry), header)).status).toBe(402)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}/content`, { wallet: buyer as never })).status).toBe(200)
  })
})

describe('facilitator mode', () => {
  test('verify and settle through an HTTP facilitator on loopback', async () => {
    const service = startFacilitator(chain, chain.relayer.privateKey)
    const calls = service.calls
    const remote = await startTestServer({
      ...chain.env,
      TRELLIS_SETTLEMENT: 'facilitator',
      TRELLIS_RELAYER_KEY: '',
      TRELLIS_FACILITATOR_URL: service.url,
    })
    try {
      const owner = newWallet()
      const remoteFeed = await createFeed(remote.url, owner)
      const entry = await createEntry(remote.url, owner, remoteFeed.id, {
        content_base64: b64('remote'),
        is_free: false,
        price: { amount: String(PRICE) },
      })
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE }))
      const paid = await fetch(`${remote.url}/v1/feeds/${remoteFeed.id}/entries/${entry.id}/content`, { headers: { 'x-payment': header } })
      expect(paid.status).toBe(200)
      expect(await paid.text()).toBe('remote')
      expect(calls).toContain('/verify')
      expect(calls).toContain('/settle')
      expect(await chain.balanceOf(owner.address)).toBe(PRICE)
      const ledger = await call(remote.url, 'GET', `/v1/transactions?pay_to=${owner.address.toLowerCase()}`)
      expect(ledger.body.transactions).toHaveLength(1)
      // A refusal by the facilitator comes back as a 402 with its reason.
      const poor = await chain.newFundedBuyer(0n)
      const refused = await fetch(`${remote.url}/v1/feeds/${remoteFeed.id}/entries/${entry.id}/content`, {
        headers: { 'x-payment': encodePaymentHeader(await v1Payment(poor, { to: owner.address, value: PRICE })) },
      })
      expect(refused.status).toBe(402)
      expect((await refused.json()).error).toMatch(/balance/)
    } finally {
      await remote.dispose()
      service.stop()
    }
  })
})

describe('early access ends', () => {
  test('a paid entry past its expires_at is free on read and flipped by the expiry job', async () => {
    const soon = Math.floor(Date.now() / 1000) + 3600
    const entry = await paidEntry({ expires_at: soon })
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?is_free=true`)).body.data.map((e: any) => e.id)).not.toContain(
      entry.id,
    )
    // Restart an hour later: the job runs at start.
    await server.restart({ ...chain.env, TRELLIS_TEST_CLOCK_OFFSET_S: '3700' })
    try {
      const free = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?is_free=true&page_size=100`)).body.data.map(
        (e: any) => e.id,
      )
      expect(free).toContain(entry.id)
      expect((await fetch(contentUrl(entry))).status).toBe(200)
    } finally {
      await server.restart(chain.env)
    }
  })
})

describe('contract wallets sign in (ERC-1271) when an RPC is configured', () => {
  // Runtime code answering `word` to any call: PUSH32 word, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN.
  const walletCode = (word: string) => `0x7f${word.slice(2)}60005260206000f3` as `0x${string}`
  const MAGIC = `0x1626ba7e${'0'.repeat(56)}`

  test('isValidSignature decides for a contract address', async () => {
    const approving = privateKeyToAccount(generatePrivateKey()).address
    const refusing = privateKeyToAccount(generatePrivateKey()).address
    await chain.testClient.setCode({ address: approving, bytecode: walletCode(MAGIC) })
    await chain.testClient.setCode({ address: refusing, bytecode: walletCode(`0x${'0'.repeat(64)}`) })
    const attempt = async (address: string) => {
      const { message } = (await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: address } })).body
      return call(server.url, 'POST', '/v1/feeds', {
        headers: {
          'x-wallet-address': address,
          'x-signature': `0x${'11'.repeat(65)}`,
          'x-message': message,
          'x-timestamp': String(Math.floor(Date.now() / 1000)),
        },
        body: { name: 'contract wallet feed' },
      })
    }
    const accepted = await attempt(approving)
    expect(accepted.status).toBe(201)
    expect(accepted.body.owner_wallet_address).toBe(approving)
    const refused = await attempt(refusing)
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe('INVALID_SIGNATURE')
  })
})

describe('the ledger API over real purchases', () => {
  test('newest first, cursor to the end, total_count, combined and case-insensitive filters', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const bought: string[] = []
    for (let i = 0; i < 5; i++) {
      const entry = await paidEntry()
      const reply = await payWith(contentUrl(entry), encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })))
      expect(reply.status).toBe(200)
      bought.push(entry.id)
    }
    const all: any[] = []
    let token: string | null = null
    do {
      const page: any = await call(
        server.url,
        'GET',
        `/v1/transactions?payer=${buyer.address.toUpperCase().replace('0X', '0x')}&page_size=2${token ? `&page_token=${token}` : ''}`,
      )
      expect(page.status).toBe(200)
      expect(page.body.pagination.total_count).toBe(5)
      all.push(...page.body.transactions)
      token = page.body.pagination.next_page_token
    } while (token)
    expect(all.map((t) => t.entry_id)).toEqual([...bought].reverse())
    expect(all.map((t) => t.id)).toEqual([...all.map((t) => t.id)].sort().reverse())
    for (const t of all)
      expect(Object.keys(t)).toEqual([
        'id',
        'payer',
        'pay_to',
        'amount',
        'asset',
        'entry_id',
        'transaction_hash',
        'created_at',
        'kind',
        'feed_id',
        'network',
      ])
    // A feed's sales: every row of the feed, and as many as the feed counts.
    const ofFeed = await call(server.url, 'GET', `/v1/transactions?feed_id=${feed.id.toUpperCase()}&page_size=100`)
    const feedPurchases = (await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body.total_purchases
    expect(ofFeed.body.pagination.total_count).toBe(feedPurchases)
    expect(ofFeed.body.transactions.length).toBe(feedPurchases)
    expect(ofFeed.body.transactions.every((t: any) => t.feed_id === feed.id && t.kind === 'entry')).toBe(true)
    const mine = await call(server.url, 'GET', `/v1/transactions?feed_id=${feed.id}&payer=${buyer.address}`)
    expect(mine.body.transactions.map((t: any) => t.entry_id)).toEqual([...bought].reverse())
    const elsewhere = await call(server.url, 'GET', `/v1/transactions?feed_id=${newWallet().address}`)
    expect([elsewhere.status, elsewhere.body.code]).toEqual([400, 'INVALID_PARAMETER'])
    const combined = await call(
      server.url,
      'GET',
      `/v1/transactions?payer=${buyer.address.toLowerCase()}&pay_to=${creator.address.toLowerCase()}&entry_id=${bought[2]}`,
    )
    expect(combined.body.transactions.map((t: any) => t.entry_id)).toEqual([bought[2]])
    expect(combined.body.data).toEqual(combined.body.transactions) // the same list where the official SDK reads it
    expect(combined.body.pagination.total_count).toBe(1)
    const nobody = await call(server.url, 'GET', `/v1/transactions?payer=${buyer.address}&pay_to=${newWallet().address}`)
    expect(nobody.body).toEqual({
      transactions: [],
      data: [],
      pagination: { page_size: 0, next_page_token: null, has_more: false, total_count: 0 },
    })
  })
})
