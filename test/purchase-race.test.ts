// Two instances on one database, two authorizations of one buyer for one entry: the one on B has checked that the
// buyer does not own the entry yet when A settles and records the other. B must not charge again (it did: its
// pending row no longer met A's at the unique index, as A's was settled by then). A test hook holds B between its
// ownership check and its pending row, so the race is the same on every run. PostgreSQL only (the embedded engine
// is one process, where one purchase is settled at a time).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { emptyDatabase, TEST_POSTGRES } from '../dev/test-database.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'

const PRICE = 10_000n

if (!TEST_POSTGRES)
  console.log('purchase-race.test.ts: skipped: instances share a PostgreSQL database (TRELLIS_TEST_POSTGRES; the PostgreSQL pass runs it)')

describe.skipIf(!TEST_POSTGRES)('a buyer who bought on one instance is not charged again by another', () => {
  let chain: TestChain
  let a: TestServer
  let b: TestServer

  beforeAll(async () => {
    chain = await startChain()
    const env = { ...chain.env, TRELLIS_DATABASE_URL: await emptyDatabase(TEST_POSTGRES!) }
    a = await startTestServer(env)
    b = await startTestServer({ ...env, TRELLIS_TEST_PAUSE_BEFORE_PENDING_MS: '1500' })
  }, 60_000)

  afterAll(async () => {
    await b?.dispose()
    await a?.dispose()
    await chain?.stop()
  })

  test("B's payment, checked before A recorded the buyer's purchase and written after, is served without a charge", async () => {
    const creator = newWallet()
    const feed = await createFeed(a.url, creator, { name: 'raced' })
    const entry = await createEntry(a.url, creator, feed.id, {
      content_base64: b64('raced words'),
      is_free: false,
      price: { amount: String(PRICE), currency: 'USDC' },
    })
    const path = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const before = await chain.balanceOf(buyer.address)
    const [first, second] = await Promise.all(
      [0, 1].map(async () => encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))),
    )

    const onB = fetch(`${b.url}${path}`, { headers: { 'x-payment': second! } }) // checked now, held 1.5 s before writing
    await Bun.sleep(300)
    const onA = await fetch(`${a.url}${path}`, { headers: { 'x-payment': first! } })
    expect([onA.status, await onA.text()]).toEqual([200, 'raced words'])
    const late = await onB
    expect([late.status, await late.text()]).toEqual([200, 'raced words'])
    // Served as the buyer it is: its receipt names no transaction (nothing of its own was settled).
    expect(JSON.parse(Buffer.from(late.headers.get('x-payment-response')!, 'base64').toString())).toMatchObject({
      success: true,
      transaction: '',
    })

    expect((await call(a.url, 'GET', `/v1/transactions?entry_id=${entry.id}`)).body.transactions).toHaveLength(1)
    expect(await chain.balanceOf(buyer.address)).toBe(before - PRICE)
  })
})
