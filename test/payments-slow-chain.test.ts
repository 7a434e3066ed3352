// A slow chain: anvil with automine off, and a server that waits 3 s for a settlement's receipt
// (TRELLIS_CONFIRM_TIMEOUT_S). A payment whose transaction was sent but is not mined yet answers 503 PAYMENT_PENDING,
// never 402 (a 402 says "not taken", and the block takes it anyway); it is recorded exactly once when the block is
// mined, and the buyer is served without paying again. In local mode, through a facilitator that broadcasts and
// then answers success:false, with an official x402 client, and on the paywall in Chromium.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createWalletClient, http, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Browser } from 'playwright-core'
import { wrapFetchWithPayment, x402Client } from '@x402/fetch'
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID, devKey, encodePaymentHeader, startChain, usdcAbi, v1Payment, type TestChain } from '../dev/chain.ts'
import { injectWallet, launchChromium } from '../dev/browser.ts'
import { honest, startFacilitator } from './helpers/facilitator.ts'
import { expectBooksBalanced, ledgerRows } from './helpers/ledger.ts'

const PRICE = 10_000n
const SECRET = 'paid after a slow block'

let chain: TestChain
let server: TestServer
let remote: TestServer
let facilitator: ReturnType<typeof startFacilitator>
let broadcaster: ReturnType<typeof createWalletClient>
let browser: Browser | undefined

beforeAll(async () => {
  chain = await startChain()
  facilitator = startFacilitator(chain, devKey(4))
  // The reconciler stays out of the way: the buyer's next request is what finds the mined block.
  const env = { ...chain.env, TRELLIS_CONFIRM_TIMEOUT_S: '3', TRELLIS_RECONCILE_S: '3600' }
  server = await startTestServer(env)
  remote = await startTestServer({
    ...env,
    TRELLIS_SETTLEMENT: 'facilitator',
    TRELLIS_RELAYER_KEY: '',
    TRELLIS_FACILITATOR_URL: facilitator.url,
  })
  broadcaster = createWalletClient({ account: privateKeyToAccount(devKey(3)), chain: chain.chain, transport: http(chain.rpcUrl) })
})
afterAll(async () => {
  await browser?.close()
  await server?.dispose()
  await remote?.dispose()
  facilitator?.stop()
  await chain?.stop()
})

/** A fresh owner with one paid text entry on `on`, a funded buyer, and both balances before anything happened. */
async function market(on: TestServer) {
  const owner = newWallet()
  const feed = await createFeed(on.url, owner)
  const entry = await createEntry(on.url, owner, feed.id, {
    content_base64: b64(SECRET),
    mime_type: 'text/plain',
    title: 'Slow block',
    is_free: false,
    price: { amount: String(PRICE) },
  })
  const buyer = await chain.newFundedBuyer(1_000_000n)
  return {
    on,
    owner,
    buyer,
    feed,
    entry,
    content: `${on.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`,
    page: `${on.url}/feeds/${feed.id}/entries/${entry.id}`,
    ownerBefore: await chain.balanceOf(owner.address),
    buyerBefore: await chain.balanceOf(buyer.address),
  }
}
type Market = Awaited<ReturnType<typeof market>>

const pay = (url: string, header: string, extra: Record<string, string> = {}) => fetch(url, { headers: { 'x-payment': header, ...extra } })
const signedIn = (m: Market) => authHeaders(m.on.url, m.buyer as unknown as Wallet)
const rows = (m: Market) => ledgerRows(m.on.url, `entry_id=${m.entry.id}`)

/** Blocks are mined only when the test says so, inside `run`. */
async function slowChain<T>(run: () => Promise<T>): Promise<T> {
  await chain.testClient.setAutomine(false)
  try {
    return await run()
  } finally {
    await chain.testClient.setAutomine(true)
  }
}

/** The 503 a payment sent but not mined gets: never a 402. */
async function expectPending(reply: Response) {
  const body = await reply.json()
  expect({ status: reply.status, code: body.code }).toEqual({ status: 503, code: 'PAYMENT_PENDING' })
  expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0)
  expect(JSON.stringify(body)).toContain('settlement_pending')
}

/** Nothing recorded and nothing moved while the block waits. */
async function expectNothingYet(m: Market) {
  expect(await rows(m)).toHaveLength(0)
  expect(await chain.balanceOf(m.buyer.address)).toBe(m.buyerBefore)
  expect(await chain.balanceOf(m.owner.address)).toBe(m.ownerBefore)
}

/** One ledger row, and the price moved once from the buyer to the owner. */
async function expectSoldOnce(m: Market) {
  expect(await rows(m)).toHaveLength(1)
  expect(await expectBooksBalanced(m.on.url, chain.balanceOf, m.owner.address, m.ownerBefore)).toBe(PRICE)
  expect(await chain.balanceOf(m.buyer.address)).toBe(m.buyerBefore - PRICE)
}

/** The buyer's own authorization, sent to the chain by a third party as a facilitator would (not mined yet). */
async function broadcast(payment: Awaited<ReturnType<typeof v1Payment>>): Promise<Hex> {
  const a = payment.payload.authorization
  return broadcaster.writeContract({
    address: chain.usdc,
    abi: usdcAbi,
    functionName: 'transferWithAuthorization',
    chain: chain.chain,
    account: broadcaster.account!,
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, payment.payload.signature],
  })
}

describe('a settlement whose receipt misses TRELLIS_CONFIRM_TIMEOUT_S', () => {
  test('local settlement: 503 PAYMENT_PENDING (never 402), nothing recorded; once mined, one sale and the payer is served', async () => {
    const m = await market(server)
    const header = encodePaymentHeader(await v1Payment(m.buyer, { to: m.owner.address, value: PRICE }))
    await slowChain(async () => {
      await expectPending(await pay(m.content, header))
      await expectPending(await pay(m.content, header)) // asked again: still the chain's to decide, never sent twice
      await expectNothingYet(m)
      await chain.testClient.mine({ blocks: 1 })
    })
    // The payer, signed in, presents the same payment again: the mined block is found and the entry served.
    const served = await pay(m.content, header, await signedIn(m))
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(SECRET)
    const [row] = await rows(m)
    expect(JSON.parse(Buffer.from(served.headers.get('x-payment-response')!, 'base64').toString()).transaction).toBe(row.transaction_hash)
    await expectSoldOnce(m)
    // The header alone is still no ticket (it is public on chain), and asking again charges nothing.
    const anonymous = await pay(m.content, header)
    expect(anonymous.status).toBe(402)
    expect((await anonymous.json()).error).toMatch(/^payment_already_settled/)
    expect((await pay(m.content, header, await signedIn(m))).status).toBe(200)
    await expectSoldOnce(m)
  }, 60_000)

  test('an official x402 client: 503 while the block waits; its next try after the block is served without a second charge', async () => {
    const m = await market(server)
    const sent: string[] = []
    const watched = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init)
      const header = request.headers.get('payment-signature')
      if (header) sent.push(header)
      return fetch(request)
    }) as typeof fetch
    const client = new x402Client()
    registerClientScheme(client, { signer: toClientEvmSigner(m.buyer as never) })
    const buy = wrapFetchWithPayment(watched, client)
    await slowChain(async () => {
      await expectPending(await buy(m.content))
      await expectNothingYet(m)
      await chain.testClient.mine({ blocks: 1 })
    })
    const served = await buy(m.content)
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(SECRET)
    await expectSoldOnce(m)
    // The second try signed a second authorization; the entry was already bought, so it was never sent.
    expect(sent).toHaveLength(2)
    const second = JSON.parse(Buffer.from(sent[1], 'base64').toString()).payload.authorization
    expect(await chain.authorizationState(m.buyer.address, second.nonce)).toBe(false)
  }, 60_000)

  test('a facilitator that broadcasts, then answers success:false before the block lands: 503, not 402; one sale once mined', async () => {
    const m = await market(remote)
    const payment = await v1Payment(m.buyer, { to: m.owner.address, value: PRICE })
    const header = encodePaymentHeader(payment)
    facilitator.behave({
      settle: false,
      before: async () => void (await broadcast(payment)),
      answer: (_, body) =>
        Response.json({
          success: false,
          errorReason: 'unexpected_settle_error',
          transaction: '',
          network: 'base-sepolia',
          payer: body.paymentPayload.payload.authorization.from,
        }),
    })
    try {
      await slowChain(async () => {
        await expectPending(await pay(m.content, header))
        await expectNothingYet(m)
        await chain.testClient.mine({ blocks: 1 })
      })
    } finally {
      facilitator.behave(honest)
    }
    const served = await pay(m.content, header, await signedIn(m))
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(SECRET)
    await expectSoldOnce(m)
  }, 60_000)

  test('the paywall in Chromium: says the payment may still be taken (never "not taken"), then that it ' +
    'was, and the buyer reads it', async () => {
    const m = await market(server)
    browser = await launchChromium()
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const problems: string[] = []
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    const wallet = await injectWallet(page, m.buyer, BASE_SEPOLIA_CHAIN_ID)
    expect((await page.goto(m.page))!.status()).toBe(402)
    await page.locator('#pay:not([disabled])').waitFor()
    const status = page.locator('#status')
    await slowChain(async () => {
      await page.locator('#pay').click()
      await page.locator('#status.pending').waitFor({ timeout: 20_000 })
      const words = await status.textContent()
      expect(words).toMatch(/may still be taken/)
      expect(words).not.toMatch(/not taken|not paid/i)
      expect(await page.locator('#pay').textContent()).toBe('Check again')
      if (process.env.TRELLIS_SCREENSHOTS)
        await page.screenshot({ path: `${process.env.TRELLIS_SCREENSHOTS}/paywall-pending.png`, fullPage: true })
      await expectNothingYet(m)
      await chain.testClient.mine({ blocks: 1 })
    })
    await page.locator('#pay').click()
    await page.locator('#status.good').waitFor({ timeout: 20_000 })
    expect(await status.textContent()).toMatch(/^Paid: the chain confirmed your payment\. Sign in with your wallet to read it\.$/)
    await expectSoldOnce(m)
    expect(await page.locator('#pay').textContent()).toBe('Sign in to read')
    await page.locator('#pay').click()
    await page.locator('#signed-in').waitFor({ timeout: 20_000 })
    await page.getByText(SECRET).first().waitFor({ timeout: 10_000 })
    // One authorization signed, then one sign-in: the buyer was never asked to pay twice.
    expect(wallet.calls).toEqual(['eth_requestAccounts', 'eth_chainId', 'eth_signTypedData_v4', 'eth_requestAccounts', 'personal_sign'])
    await expectSoldOnce(m)
    expect(problems).toEqual([])
    await page.close()
  }, 90_000)
})
