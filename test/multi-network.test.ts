// One server selling on two chains at once (issue 40): two anvils with different chain ids, each with the EIP-3009
// test token; every 402 offers both; a buyer pays on either with the official clients, each sale names its network,
// balances move on the chain paid on only; a payment signed for one chain and sent as the other's is refused; the
// same nonce on both chains is two payments; verify-ledger proves each network's rows against its own chain. (The
// hostile payer on the second chain: payments-hostile-second-network.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createWalletClient, http, type Address } from 'viem'
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch'
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch'
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, sellingOn, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { closeClients, data, refusal, stdioClient } from './helpers/mcp-client.ts'
import { injectWallet, launchChromium, pageProblems } from '../dev/browser.ts'

const PRICE = 10_000n

let chainA: TestChain // base-sepolia, 84532
// Polygon Amoy (80002): a chain both x402 clients know, whose USDC (from x402 1.2: @x402/evm ships none there) signs
// as USDC version 2, as the test token does.
let chainB: TestChain
let server: TestServer
let creator: Wallet
let feed: any
let env: Record<string, string>

beforeAll(async () => {
  ;[chainA, chainB] = await Promise.all([startChain(), startChain({ network: 'polygon-amoy' })])
  env = sellingOn(chainA, chainB)
  server = await startTestServer(env)
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'sold on two chains' })
})
afterAll(async () => {
  await closeClients()
  await server?.dispose()
  await Promise.all([chainA?.stop(), chainB?.stop()])
})

const paidEntry = () =>
  createEntry(server.url, creator, feed.id, {
    content_base64: b64('worth paying for'),
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
const contentUrl = (entry: { id: string }) => `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
const ledger = async (query: string) => (await call(server.url, 'GET', `/v1/transactions?${query}`)).body
const decoded = (value: string | null) => JSON.parse(Buffer.from(value!, 'base64').toString())
const balances = async (address: Address) => ({ a: await chainA.balanceOf(address), b: await chainB.balanceOf(address) })

describe('one server, two chains', () => {
  test('every 402 offers one requirement per network, in both versions, each with its own token facts', async () => {
    const entry = await paidEntry()
    const answer = await fetch(contentUrl(entry))
    expect(answer.status).toBe(402)
    const v1 = await answer.json()
    expect(v1.accepts.map((one: any) => [one.network, one.asset, one.extra])).toEqual([
      ['base-sepolia', chainA.usdc, { name: 'USDC', version: '2' }],
      ['polygon-amoy', chainB.usdc, { name: 'USDC', version: '2' }],
    ])
    const v2 = decoded(answer.headers.get('payment-required'))
    expect(v2.accepts.map((one: any) => one.network)).toEqual(['eip155:84532', 'eip155:80002'])
  })

  test('@x402/fetch pays on chain A, x402-fetch on chain B: each row names its network, funds move on that chain only', async () => {
    const entry = await paidEntry()
    const [buyerA, buyerB] = await Promise.all([chainA.newFundedBuyer(1_000_000n), chainB.newFundedBuyer(1_000_000n)])
    const sellerBefore = await balances(creator.address as Address)

    const client = new x402Client()
    registerClientScheme(client, { signer: toClientEvmSigner(buyerA as never) })
    const paidA = await wrapFetchV2(fetch, client)(contentUrl(entry))
    expect(paidA.status).toBe(200)
    expect(decoded(paidA.headers.get('payment-response'))).toMatchObject({ success: true, network: 'eip155:84532' })

    const walletB = createWalletClient({ account: buyerB, chain: chainB.chain, transport: http(chainB.rpcUrl) })
    const paidB = await wrapFetchV1(fetch, walletB as never)(contentUrl(entry))
    expect(paidB.status).toBe(200)
    expect(await paidB.text()).toBe('worth paying for')
    expect(decoded(paidB.headers.get('x-payment-response'))).toMatchObject({ success: true, network: 'polygon-amoy' })

    expect(await balances(buyerA.address)).toEqual({ a: 1_000_000n - PRICE, b: 0n })
    expect(await balances(buyerB.address)).toEqual({ a: 0n, b: 1_000_000n - PRICE })
    expect(await balances(creator.address as Address)).toEqual({ a: sellerBefore.a + PRICE, b: sellerBefore.b + PRICE })

    const rows = (await ledger(`entry_id=${entry.id}`)).transactions
    expect(rows.map((row: any) => [row.payer, row.network]).sort()).toEqual(
      [
        [buyerA.address, 'base-sepolia'],
        [buyerB.address, 'polygon-amoy'],
      ].sort(),
    )
    // One currency: both sales add up in the entry's totals.
    const listed = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=100`)).body
    const totals = listed.data.find((one: { id: string }) => one.id === entry.id)
    expect({ purchases: totals.total_purchases, revenue: totals.total_revenue }).toEqual({ purchases: 2, revenue: String(2n * PRICE) })
    for (const network of ['base-sepolia', 'polygon-amoy']) {
      const shown = (await ledger(`network=${network}&entry_id=${entry.id}`)).transactions
      expect(shown.map((row: any) => row.network)).toEqual([network])
    }
  })

  test('a payment signed for chain A sent as chain B’s requirement is refused, and nothing moves', async () => {
    const entry = await paidEntry()
    const buyer = await chainA.newFundedBuyer(1_000_000n)
    await chainB.fundBuyer(buyer.address, 1_000_000n)
    const forA = await v1Payment(buyer, { to: creator.address as Address, value: PRICE }) // chain 84532's domain
    const asB = { ...forA, network: 'polygon-amoy' }
    const answer = await fetch(contentUrl(entry), { headers: { 'x-payment': encodePaymentHeader(asB) } })
    expect(answer.status).toBe(402)
    expect((await answer.json()).error).toMatch(/signature/i)
    expect(await balances(buyer.address)).toEqual({ a: 1_000_000n, b: 1_000_000n })
    expect((await ledger(`entry_id=${entry.id}`)).transactions).toHaveLength(0)
  })

  test('the same payer and nonce on both chains are two payments, each settled on its own chain', async () => {
    const [one, two] = [await paidEntry(), await paidEntry()]
    const buyer = await chainA.newFundedBuyer(1_000_000n)
    await chainB.fundBuyer(buyer.address, 1_000_000n)
    const nonce = `0x${'ab'.repeat(32)}` as const
    const onA = await v1Payment(buyer, { to: creator.address as Address, value: PRICE, nonce })
    const onB = await chainB.payment(buyer, { to: creator.address as Address, value: PRICE, nonce })
    expect((await fetch(contentUrl(one), { headers: { 'x-payment': encodePaymentHeader(onA) } })).status).toBe(200)
    expect((await fetch(contentUrl(two), { headers: { 'x-payment': encodePaymentHeader(onB) } })).status).toBe(200)
    expect(await balances(buyer.address)).toEqual({ a: 1_000_000n - PRICE, b: 1_000_000n - PRICE })
    expect((await ledger(`entry_id=${two.id}`)).transactions[0].network).toBe('polygon-amoy')
  })

  test('verify-ledger proves each network’s rows against its own chain', async () => {
    const report = await trellis(['verify-ledger'], server.dataDir, { ...env, ...server.recordsEnv })
    expect({ code: report.code, stderr: report.stderr }).toMatchObject({ code: 0 })
    const parsed = JSON.parse(report.stdout)
    expect(parsed.ok).toBe(true)
    expect(parsed.provenByNetwork['base-sepolia']).toBeGreaterThanOrEqual(2)
    expect(parsed.provenByNetwork['polygon-amoy']).toBeGreaterThanOrEqual(2)
  })
})

test('a wallet signs in on the chain it names (x-chain-id) when the server sells there, else on the first', async () => {
  const wallet = newWallet()
  const nonce = async (chainId?: string) =>
    (
      await call(server.url, 'POST', '/v1/auth/nonce', {
        headers: chainId ? { 'x-chain-id': chainId } : {},
        body: { wallet_address: wallet.address },
      })
    ).body.siwe_message as string
  expect(await nonce(String(chainB.chainId))).toContain(`Chain ID: ${chainB.chainId}`)
  for (const other of [undefined, '1', 'x', '84532 ']) expect(await nonce(other)).toContain('Chain ID: 84532')
})

test('in a browser: the paywall offers both networks, chooses the one the wallet is on, and pays there', async () => {
  const browser = await launchChromium()
  try {
    const entry = await paidEntry()
    const buyer = await chainB.newFundedBuyer(1_000_000n)
    const page = await browser.newPage({ viewport: { width: 360, height: 800 } })
    await injectWallet(page, buyer, chainB.chainId) // a wallet on chain B
    const answer = await page.goto(`${server.url}/feeds/${feed.id}/entries/${entry.id}`)
    expect(answer!.status()).toBe(402)
    const options = await page.locator('#pay-network option').allTextContents()
    expect(options).toEqual(['Base Sepolia (base-sepolia)', 'Polygon Amoy (polygon-amoy)'])
    await page.locator('#pay:not([disabled])').waitFor()
    await page.waitForFunction(() => (document.getElementById('pay-network') as HTMLSelectElement).value === '1')
    expect(await pageProblems(page)).toEqual({ sideways: false, violations: [] })
    // Chain A chosen: the wallet on B refuses to switch, nothing is signed or paid.
    await page.locator('#pay-network').selectOption('0')
    await page.locator('#pay').click()
    await page.locator('#status.bad').waitFor()
    expect(await page.locator('#status').textContent()).toStartWith('Not paid')
    // Chain B chosen again: paid there.
    await page.locator('#pay-network').selectOption('1')
    await page.locator('#pay:not([disabled])').click()
    await page.locator('#bought:not([hidden])').waitFor({ timeout: 30_000 })
    expect((await ledger(`entry_id=${entry.id}`)).transactions.map((row: any) => row.network)).toEqual(['polygon-amoy'])
    expect(await chainB.balanceOf(buyer.address)).toBe(1_000_000n - PRICE)
  } finally {
    await browser.close()
  }
}, 60_000)

describe('trellis mcp before a server selling on two chains', () => {
  const args = (entry: { id: string }) => ({ feed_id: feed.id, entry_id: entry.id })

  test('pinned to chain B it pays there only; unpinned it keeps the networks the server named and pays on the first', async () => {
    const buyer = await chainA.newFundedBuyer(1_000_000n)
    await chainB.fundBuyer(buyer.address, 1_000_000n)
    const onB = await stdioClient(server.url, { TRELLIS_MCP_WALLET_KEY: buyer.privateKey, TRELLIS_MCP_NETWORKS: 'polygon-amoy' })
    expect((await data(onB.client, 'buy_entry', args(await paidEntry()))).purchase).toMatchObject({ paid: true })
    expect(await balances(buyer.address)).toEqual({ a: 1_000_000n, b: 1_000_000n - PRICE })
    const unpinned = await stdioClient(server.url, { TRELLIS_MCP_WALLET_KEY: buyer.privateKey })
    expect((await data(unpinned.client, 'buy_entry', args(await paidEntry()))).purchase).toMatchObject({ paid: true })
    expect(await balances(buyer.address)).toEqual({ a: 1_000_000n - PRICE, b: 1_000_000n - PRICE })
  })

  test('a server that names mainnets beside testnets is no Trellis: nothing is signed', async () => {
    // A hostile front of the real server: its manifest names Base mainnet beside the testnets.
    const front = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        if (url.pathname === '/.well-known/x402')
          return Response.json({ network: 'base', networks: ['eip155:8453', 'eip155:84532', 'eip155:80002'] })
        const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
        return fetch(`${server.url}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body })
      },
    })
    try {
      const buyer = await chainA.newFundedBuyer(1_000_000n)
      const agent = await stdioClient(`http://127.0.0.1:${front.port}`, { TRELLIS_MCP_WALLET_KEY: buyer.privateKey })
      expect(await refusal(agent.client, 'buy_entry', args(await paidEntry()))).toContain('names mainnets and testnets together')
      expect(await balances(buyer.address)).toEqual({ a: 1_000_000n, b: 0n })
    } finally {
      front.stop(true)
    }
  })
})
