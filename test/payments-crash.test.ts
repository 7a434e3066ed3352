// kill -9 at a random moment while 20 buyers pay at once, three times over. After each restart the reconciler lets
// the chain decide every interrupted payment: nothing stays pending, the database is intact, every buyer's and
// every owner's on-chain balance moved by exactly what the ledger says, and verify-ledger agrees.
import { afterAll, expect, test } from 'bun:test'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { b64, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type Buyer, type TestChain } from '../dev/chain.ts'
import { gauge, ledgerSum, verifyLedger, waitFor } from './helpers/ledger.ts'

const PRICE = 10_000n
const BUYERS = 20

// Each round has its own chain and server: expiring the unsent authorizations moves that chain's clock forward.
let chain: TestChain
let server: TestServer
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

async function round(n: number) {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_RECONCILE_S: '1', TRELLIS_LEDGER_CHECK_S: '1' })
  const owners: Wallet[] = Array.from({ length: 4 }, () => newWallet())
  const entries = await Promise.all(
    owners.map(async (owner) => {
      const feed = await createFeed(server.url, owner)
      return Promise.all(
        Array.from({ length: 5 }, () =>
          createEntry(server.url, owner, feed.id, { content_base64: b64('crash'), is_free: false, price: { amount: String(PRICE) } }).then(
            (entry) => ({ owner, url: `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content` }),
          ),
        ),
      )
    }),
  ).then((all) => all.flat())
  const buyers: Buyer[] = []
  for (let i = 0; i < BUYERS; i++) buyers.push(await chain.newFundedBuyer(1_000_000n))
  const before = new Map<string, bigint>()
  for (const w of [...owners, ...buyers]) before.set(w.address, await chain.balanceOf(w.address))
  const headers = await Promise.all(
    buyers.map((b, i) => v1Payment(b, { to: entries[i].owner.address, value: PRICE }).then(encodePaymentHeader)),
  )

  // A random moment over the whole purchase (verify, insert, broadcast, record); printed, to replay a failure.
  const killAfterMs = Math.floor(10 + Math.random() * 400)
  const replies = buyers.map((_, i) =>
    fetch(entries[i].url, { headers: { 'x-payment': headers[i] } }).then(
      (r) => r.status,
      () => 'lost',
    ),
  )
  await Bun.sleep(killAfterMs)
  await server.kill()
  const statuses = await Promise.all(replies)
  const served = statuses.filter((s) => s === 200).length

  await server.restart()
  // Authorizations that never reached the chain expire by chain time: move it past validBefore + margin.
  await chain.testClient.increaseTime({ seconds: 600 })
  await chain.testClient.mine({ blocks: 1 })
  await waitFor('every interrupted payment decided', async () => (await gauge(server.url, 'trellis_pending_payments')) === 0, 30_000)

  for (const owner of owners) {
    expect((await chain.balanceOf(owner.address)) - before.get(owner.address)!).toBe(await ledgerSum(server.url, `pay_to=${owner.address}`))
  }
  for (const [i, buyer] of buyers.entries()) {
    const spent = before.get(buyer.address)! - (await chain.balanceOf(buyer.address))
    expect(spent).toBe(await ledgerSum(server.url, `payer=${buyer.address}`))
    // A buyer answered 200 was charged and recorded.
    if (statuses[i] === 200) expect(spent).toBe(PRICE)
  }
  const recorded = (await ledgerSum(server.url, 'asset=USDC')) / PRICE
  console.log(`round ${n}: kill -9 after ${killAfterMs} ms; ${served} answered 200, ${recorded} purchases recorded after reconciliation`)

  await server.stop()
  // The engine's own check of its files (SQLite's integrity_check, PostgreSQL's amcheck), as `trellis verify` runs it.
  const { json: verified } = await trellis(['verify'], server.dataDir)
  expect({ integrity: verified.integrity, skipped: verified.integrity_skipped }).toEqual({ integrity: [], skipped: undefined })
  const pending = await withRecords(
    server,
    (db) => db.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM payments WHERE status = 'pending'`),
    { readonly: true },
  )
  expect(Number(pending!.n)).toBe(0)
  const { code, report, stderr } = await verifyLedger(server.dataDir, chain.env)
  expect({ code, stderr: code === 0 ? '' : stderr, problems: report?.problems }).toEqual({ code: 0, stderr: '', problems: [] })
  expect(report.proven).toBe(report.transactions)
  await server.dispose()
  await chain.stop()
}

test('kill -9 during 20 concurrent purchases, three times: nothing lost, nothing doubled, the ledger equals the chain', async () => {
  for (const n of [1, 2, 3]) await round(n)
}, 240_000)
