// kill -9 while 16 buyers pay at once on two chains (issue 40: the crash test per network): half pay on Base Sepolia,
// half on Sei's testnet, each buyer funded on both. After the restart the reconciler lets each chain decide its own
// interrupted payments: nothing stays pending, each owner's and buyer's balance moved on each chain by exactly what
// the ledger's rows of that network say, nothing moved on the other, and verify-ledger proves both networks' rows.
import { afterAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, sellingOn, startChain, type Buyer, type TestChain } from '../dev/chain.ts'
import { gauge, ledgerSum, verifyLedger, waitFor } from './helpers/ledger.ts'

const PRICE = 10_000n
const BUYERS = 16

let chains: TestChain[] = []
let server: TestServer
afterAll(async () => {
  await server?.dispose()
  await Promise.all(chains.map((chain) => chain.stop()))
})

test('kill -9 during purchases on two chains: each chain decides its own, the ledger equals each chain', async () => {
  const [a, b] = (chains = await Promise.all([startChain(), startChain({ network: 'sei-testnet' })]))
  const env = sellingOn(a!, b!)
  server = await startTestServer({ ...env, TRELLIS_RECONCILE_S: '1' })
  const owners: Wallet[] = [newWallet(), newWallet()]
  const urls = await Promise.all(
    Array.from({ length: BUYERS }, async (_, i) => {
      const owner = owners[i % 2]!
      const feed = await createFeed(server.url, owner)
      const entry = await createEntry(server.url, owner, feed.id, {
        content_base64: b64('x'),
        is_free: false,
        price: { amount: String(PRICE) },
      })
      return { owner, url: `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content` }
    }),
  )
  const buyers: Buyer[] = []
  for (let i = 0; i < BUYERS; i++) {
    const buyer = await a!.newFundedBuyer(1_000_000n)
    await b!.fundBuyer(buyer.address, 1_000_000n)
    buyers.push(buyer)
  }
  // Even buyers pay on chain A, odd ones on chain B (the same authorization fields, each chain's own domain).
  const onB = (i: number) => i % 2 === 1
  const headers = await Promise.all(
    buyers.map(async (buyer, i) => {
      const chain = onB(i) ? b! : a!
      return encodePaymentHeader(await chain.payment(buyer, { to: urls[i]!.owner.address, value: PRICE }))
    }),
  )

  // A random moment over the whole purchase (verify, insert, broadcast, record); printed, to replay a failure.
  const killAfterMs = Math.floor(150 + Math.random() * 450)
  const replies = buyers.map((_, i) =>
    fetch(urls[i]!.url, { headers: { 'x-payment': headers[i]! } }).then(
      (r) => r.status,
      () => 'lost',
    ),
  )
  await Bun.sleep(killAfterMs)
  await server.kill()
  const statuses = await Promise.all(replies)
  await server.restart()
  for (const chain of [a!, b!]) {
    await chain.testClient.increaseTime({ seconds: 600 })
    await chain.testClient.mine({ blocks: 1 })
  }
  await waitFor('every interrupted payment decided', async () => (await gauge(server.url, 'trellis_pending_payments')) === 0, 30_000)

  for (const [chain, network] of [
    [a!, 'base-sepolia'],
    [b!, 'sei-testnet'],
  ] as const) {
    for (const owner of owners)
      expect({ network, moved: await chain.balanceOf(owner.address) }).toEqual({
        network,
        moved: await ledgerSum(server.url, `pay_to=${owner.address}&network=${network}`),
      })
    for (const [i, buyer] of buyers.entries()) {
      const spent = 1_000_000n - (await chain.balanceOf(buyer.address))
      expect({ network, i, spent }).toEqual({ network, i, spent: await ledgerSum(server.url, `payer=${buyer.address}&network=${network}`) })
      // Nothing moves on the chain a buyer did not pay on; a buyer answered 200 paid on its own.
      const paysHere = onB(i) === (network === 'sei-testnet')
      if (!paysHere) expect({ network, i, spent }).toEqual({ network, i, spent: 0n })
      else if (statuses[i] === 200) expect({ network, i, spent }).toEqual({ network, i, spent: PRICE })
    }
  }
  const recorded = (await ledgerSum(server.url, 'asset=USDC')) / PRICE
  console.log(
    `kill -9 after ${killAfterMs} ms; ${statuses.filter((s) => s === 200).length} of ${BUYERS} answered 200, ${recorded} recorded`,
  )
  await server.stop()
  const { code, report, stderr } = await verifyLedger(server.dataDir, { ...env, ...server.recordsEnv })
  expect({ code, stderr: code === 0 ? '' : stderr, problems: report?.problems }).toEqual({ code: 0, stderr: '', problems: [] })
  expect(report.proven).toBe(report.transactions)
}, 180_000)
