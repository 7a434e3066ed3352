// Buying a feed's pass (issue 37) on a real chain with the official clients, and reading with it: the same purchase
// machinery as entries (one charge, one ledger row of kind "pass"), the pass's time running from its sale, extended by
// buying again; its holder reads every paid entry of the feed (one published later too) with no payment; a stranger
// pays; the pass ends and 402 comes back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch'
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch'
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { createWalletClient, http } from 'viem'
import { wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x'
import { startTestServer, testClockFile, trellis, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { waitFor } from './helpers/ledger.ts'

const PASS_PRICE = 50_000n
const ENTRY_PRICE = 10_000n

let chain: TestChain
let server: TestServer
let creator: Wallet
let feedId: string
const entries: { id: string; secret: string }[] = []

const passUrl = () => `${server.url}/v1/feeds/${feedId}/pass/purchases`
const contentUrl = (id: string) => `${server.url}/v1/feeds/${feedId}/entries/${id}/content`
const addPaidEntry = async (secret: string) => {
  const entry = await createEntry(server.url, creator, feedId, {
    content_base64: b64(secret),
    mime_type: 'text/plain',
    is_free: false,
    price: { amount: String(ENTRY_PRICE), currency: 'USDC' },
  })
  entries.push({ id: entry.id, secret })
}
/** Reads an entry's bytes signed as `wallet` (x-wallet-address and a fresh signature). */
const readSigned = async (wallet: Wallet, id: string) => fetch(contentUrl(id), { headers: await authHeaders(server.url, wallet) })
const ledgerOfFeed = async () => (await call(server.url, 'GET', `/v1/transactions?feed_id=${feedId}&page_size=100`)).body

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_TEST_CLOCK_FILE: testClockFile(), TRELLIS_STATS_REFRESH_S: '1' })
  creator = newWallet()
  feedId = (await createFeed(server.url, creator, { name: 'All of it' })).id
  await addPaidEntry('first')
  await addPaidEntry('second')
  const offered = await call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, {
    wallet: creator,
    body: { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: 3600, description: 'an hour of everything' },
  })
  expect(offered.status).toBe(200)
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

describe('buying a pass', () => {
  test('the 402: the pass price to the owner, the resource, a description naming the feed and the duration', async () => {
    const answer = await fetch(passUrl(), { method: 'POST' })
    expect(answer.status).toBe(402)
    const body = (await answer.json()) as { accepts: Record<string, string>[] }
    expect(body.accepts[0]).toMatchObject({ maxAmountRequired: String(PASS_PRICE), payTo: creator.address, resource: passUrl() })
    expect(body.accepts[0]!.description).toBe('A 1 hour pass to "All of it": every paid entry, those published later too')
    expect(answer.headers.get('payment-required')).toBeString()
    // Asked again (answered before Elysia once prepared): the same requirement, each with a sign-in nonce of its own.
    const again = await Promise.all([1, 2, 3].map(() => fetch(passUrl(), { method: 'POST' })))
    const bodies = await Promise.all(again.map((r) => r.json()))
    expect(again.map((r) => r.status)).toEqual([402, 402, 402])
    expect(bodies.map((b) => b.accepts)).toEqual([body.accepts, body.accepts, body.accepts])
    const nonces = again.map(
      (r) => JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString()).extensions['sign-in-with-x'].info.nonce,
    )
    expect(new Set(nonces).size).toBe(3)
  })

  test('x402-fetch (v1) buys one: 201 the pass, one charge, one ledger row of kind pass; it reads every paid entry', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const wallet = createWalletClient({ account: buyer, chain: chain.chain, transport: http(chain.rpcUrl) })
    const pay = wrapFetchV1(fetch, wallet as never)
    const bought = await pay(passUrl(), { method: 'POST' })
    expect(bought.status).toBe(201)
    expect(bought.headers.get('x-payment-response')).toBeString()
    const pass = (await bought.json()) as Record<string, any>
    expect(pass.transaction_id).toMatch(/^tx_/)
    expect([pass.feed_id, pass.holder]).toEqual([feedId, buyer.address])
    expect(pass.expires_at - pass.starts_at).toBe(3600)
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PASS_PRICE)
    expect(await chain.balanceOf(creator.address)).toBe(before.creator + PASS_PRICE)
    const sale = (await ledgerOfFeed()).transactions.find((t: any) => t.id === pass.transaction_id)
    expect(sale).toMatchObject({ kind: 'pass', entry_id: null, feed_id: feedId, amount: String(PASS_PRICE), payer: buyer.address })

    await addPaidEntry('published after the pass was bought')
    const rows = (await ledgerOfFeed()).pagination.total_count
    for (const { id, secret } of entries) {
      const read = await readSigned(buyer, id)
      expect([read.status, await read.text()]).toEqual([200, secret])
    }
    expect((await ledgerOfFeed()).pagination.total_count).toBe(rows)
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PASS_PRICE)
    const feed = (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body
    expect(feed.total_purchases).toBe(rows)

    // And with sign-in-with-x, as any standard client signs in: a proof from the holder reads; a stranger's does not.
    const holderRead = await wrapFetchWithSIWx(fetch, buyer)(contentUrl(entries[2]!.id))
    expect([holderRead.status, await holderRead.text()]).toEqual([200, entries[2]!.secret])
    const strangerRead = await wrapFetchWithSIWx(fetch, newWallet())(contentUrl(entries[2]!.id))
    expect(strangerRead.status).toBe(402)
    expect((await ledgerOfFeed()).pagination.total_count).toBe(rows)

    // A stranger still pays.
    expect((await readSigned(newWallet(), entries[0]!.id)).status).toBe(402)
  })

  test('@x402/fetch (v2) buys one, and buying again extends it from its end', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const client = new x402Client()
    registerClientScheme(client, { signer: toClientEvmSigner(buyer as never) })
    const pay = wrapFetchV2(fetch, client)
    const first = await pay(passUrl(), { method: 'POST' })
    expect(first.status).toBe(201)
    expect(first.headers.get('payment-response')).toBeString()
    const one = (await first.json()) as Record<string, number>
    const again = await pay(passUrl(), { method: 'POST' })
    expect(again.status).toBe(201)
    const two = (await again.json()) as Record<string, number>
    expect(two.starts_at).toBe(one.expires_at)
    expect(two.expires_at).toBe(one.expires_at + 3600)
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - 2n * PASS_PRICE)
    // Listed to its holder, newest first; to no one else.
    const listed = await call(server.url, 'GET', `/v1/passes?holder=${buyer.address}`, { wallet: buyer as never })
    expect(listed.body.data.map((p: { starts_at: number }) => p.starts_at)).toEqual([two.starts_at, one.starts_at])
    const other = await call(server.url, 'GET', `/v1/passes?holder=${buyer.address}`, { wallet: newWallet() })
    expect([other.status, other.body.code]).toEqual([403, 'UNAUTHORIZED'])
  })

  test('a payment presented again does not buy a second pass; the pass ends and 402 comes back', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PASS_PRICE }))
    const first = await fetch(passUrl(), { method: 'POST', headers: { 'x-payment': header } })
    expect(first.status).toBe(201)
    const replay = await fetch(passUrl(), { method: 'POST', headers: { 'x-payment': header } })
    expect(replay.status).toBe(402)
    expect(((await replay.json()) as { error: string }).error).toStartWith('payment_already_settled')
    expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - PASS_PRICE)
    // Read in a browser session, which outlives the pass (a signed request's timestamp would not, once the clock moves).
    const opened = await fetch(`${server.url}/v1/auth/session`, { method: 'POST', headers: await authHeaders(server.url, buyer) })
    const cookie = opened.headers.getSetCookie()[0]!.split(';')[0]!
    const read = () => fetch(contentUrl(entries[0]!.id), { headers: { cookie } })
    expect((await read()).status).toBe(200)
    await server.moveClock(3601)
    try {
      expect((await read()).status).toBe(402)
    } finally {
      await server.moveClock(0)
    }
    // Every pass sold is in the ledger, the totals and the passes held, as the audit recomputes them.
    expect((await trellis(['verify'], server.dataDir)).json).toMatchObject({ ok: true })
  })

  test("the feed's totals, its creator's statistics and the boards agree with a recomputation from the ledger", async () => {
    const rows = (await ledgerOfFeed()).data as { kind: string; entry_id: string | null; feed_id: string; amount: string; payer: string }[]
    expect(rows.filter((t) => t.kind === 'pass').length).toBeGreaterThanOrEqual(4)
    for (const t of rows)
      expect([t.feed_id, t.kind === 'pass' ? t.entry_id : 'entry']).toEqual([feedId, t.kind === 'pass' ? null : 'entry'])
    const count = String(rows.length)
    const revenue = String(rows.reduce((sum, t) => sum + BigInt(t.amount), 0n))
    const buyers = String(new Set(rows.map((t) => t.payer)).size)
    const feed = (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body
    expect([feed.total_purchases, String(feed.total_revenue)]).toEqual([rows.length, revenue])
    const agrees = async () => {
      const stats = (await call(server.url, 'GET', `/v1/wallets/${feed.owner_id}/stats`)).body.revenue_stats
      const popular = (await call(server.url, 'GET', '/v1/leaderboards/most-popular?period=all')).body.data
      const providers = (await call(server.url, 'GET', '/v1/leaderboards/top-providers?period=all')).body.data
      const ranked = popular.find((item: { feed_id: string }) => item.feed_id === feedId)
      const provider = providers.find((item: { wallet_address: string }) => item.wallet_address === creator.address)
      return (
        JSON.stringify([stats.total_revenue, String(stats.total_purchases_received), String(stats.unique_buyers)]) ===
          JSON.stringify([revenue, count, buyers]) &&
        JSON.stringify(ranked && [ranked.total_purchases, ranked.total_revenue, ranked.unique_buyers]) ===
          JSON.stringify([count, revenue, buyers]) &&
        JSON.stringify(provider && [provider.total_purchases, provider.total_revenue]) === JSON.stringify([count, revenue])
      )
    }
    await waitFor('the statistics and boards of the recomputed ledger', agrees, 15_000)
  })
})
