// One server selling on two chains at once (issue 40): two anvils with different chain ids, each with the EIP-3009
// test token; every 402 offers both; a buyer pays on either with the official clients, each sale names its network,
// balances move on the chain paid on only; a payment signed for one chain and sent as the other's is refused; the
// same nonce on both chains is two payments; verify-ledger proves each network's rows against its own chain.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createWalletClient, http, type Address } from 'viem'
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch'
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch'
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, signTransferAuthorization, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { NETWORKS } from '../src/config/networks.ts'

const PRICE = 10_000n
const AMOY = NETWORKS['polygon-amoy']

let chainA: TestChain // base-sepolia, 84532
let chainB: TestChain // polygon-amoy, 80002
let server: TestServer
let creator: Wallet
let feed: any
let env: Record<string, string>

beforeAll(async () => {
  ;[chainA, chainB] = await Promise.all([startChain(), startChain({ chainId: AMOY.chainId, usdcAddress: AMOY.usdcAddress })])
  env = {
    ...chainA.env,
    TRELLIS_NETWORKS: 'base-sepolia,polygon-amoy',
    TRELLIS_RPC_URL_POLYGON_AMOY: chainB.rpcUrl,
    TRELLIS_SETTLEMENT_POLYGON_AMOY: 'local',
    TRELLIS_RELAYER_KEY_POLYGON_AMOY: chainB.relayer.privateKey,
  }
  server = await startTestServer(env)
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'sold on two chains' })
})
afterAll(async () => {
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
    expect((await ledger('network=polygon-amoy')).transactions.every((row: any) => row.network === 'polygon-amoy')).toBe(true)
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
    const signedB = await signTransferAuthorization(buyer, {
      to: creator.address as Address,
      value: PRICE,
      nonce,
      domain: { chainId: AMOY.chainId, verifyingContract: AMOY.usdcAddress },
    })
    const onB = { x402Version: 1, scheme: 'exact', network: 'polygon-amoy', payload: signedB }
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
