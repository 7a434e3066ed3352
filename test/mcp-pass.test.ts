// Feed passes for AI agents (issue 37), driven by the MCP SDK's own client against a real server settling on a real
// chain (anvil + the EIP-3009 test USDC): get_price and search_feeds show a feed's pass; buy_pass (`trellis mcp` with
// the operator's wallet) pays it through the entry purchase's own code, within the same spending caps, and then every
// paid entry of the feed is read with no further payment. A front in front of the server records what the stdio
// process sent (so "nothing was signed" is checked on the wire), and can keep a payment instead of passing it on (so
// what the agent is told of a payment that left is checked against what the chain did).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { closeClients, data, httpClient, refusal, run, stdioClient, unfenced } from './helpers/mcp-client.ts'
import { mcpFront, type McpFront } from './helpers/mcp-front.ts'

const ENTRY_PRICE = 10_000n // 0.01 USDC
const PASS_PRICE = 50_000n // 0.05 USDC, for a day
const DEAR_PASS = 500_000n // over the per-call cap below
const DAY = 86_400

let chain: TestChain
let server: TestServer
let front: McpFront
let creator: Wallet
let daily: any // a day's pass for 0.05 USDC, three paid entries
let premium: any // a pass over the per-call cap, one paid entry
let plain: any // no pass, two paid entries
const paid: Record<string, any[]> = { daily: [], premium: [], plain: [] }

const passOffer = (feed: { id: string }, amount: bigint, duration_s: number, description: string | null) =>
  call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, {
    wallet: creator,
    body: { price: { amount: String(amount) }, duration_s, description },
  })
const ledgerOf = async (feed: { id: string }) => (await call(server.url, 'GET', `/v1/transactions?feed_id=${feed.id}&page_size=100`)).body
const agentWith = (key: `0x${string}`, caps: Record<string, string> = {}) =>
  stdioClient(front.url, { TRELLIS_MCP_WALLET_KEY: key, TRELLIS_MCP_MAX_PER_CALL: '100000', ...caps })
const passPath = (feed: { id: string }) => `/v1/feeds/${feed.id}/pass/purchases`

beforeAll(async () => {
  chain = await startChain()
  front = mcpFront(() => server.url)
  // The server's public URL is the front's: its sign-in messages name the host `trellis mcp` is pointed at.
  server = await startTestServer({ ...chain.env, TRELLIS_PUBLIC_URL: front.url })
  creator = newWallet()
  daily = await createFeed(server.url, creator, { name: 'Daily notes', tags: ['notes'] })
  premium = await createFeed(server.url, creator, { name: 'Premium notes', tags: ['notes'] })
  plain = await createFeed(server.url, creator, { name: 'Plain notes', tags: ['notes'] })
  for (const [name, feed, count] of [
    ['daily', daily, 3],
    ['premium', premium, 1],
    ['plain', plain, 2],
  ] as const) {
    for (let i = 0; i < count; i++) {
      paid[name]!.push(
        await createEntry(server.url, creator, feed.id, {
          content_base64: b64(`${name} note ${i}`),
          title: `Note ${i}`,
          is_free: false,
          price: { amount: String(ENTRY_PRICE), currency: 'USDC' },
        }),
      )
    }
  }
  expect((await passOffer(daily, PASS_PRICE, DAY, 'a day of notes')).status).toBe(200)
  expect((await passOffer(premium, DEAR_PASS, 30 * DAY, null)).status).toBe(200)
}, 120_000)

afterAll(async () => {
  await closeClients()
  front?.stop()
  await server?.dispose()
  await chain?.stop()
})

const dailyTerms = {
  amount: String(PASS_PRICE),
  amount_usdc: '0.050000',
  duration_s: DAY,
  duration: '1 day',
  description: 'a day of notes',
}

describe('the pass beside the price (over /mcp, no wallet)', () => {
  test("get_price gives the entry's price and its feed's pass (or null), with where to buy it", async () => {
    const client = await httpClient(server.url)
    const price = await data(client, 'get_price', { feed_id: daily.id, entry_id: paid.daily![0].id })
    const resource = `${front.url}${passPath(daily)}`
    expect(price).toMatchObject({ is_free: false, amount: String(ENTRY_PRICE), pay_to: creator.address })
    expect(price.pass).toEqual({ ...dailyTerms, resource, how_to_buy: `POST ${resource} with an x402 client` })
    // The pass's 402 at that URL asks for what get_price said.
    const challenge = await (await fetch(`${server.url}${passPath(daily)}`, { method: 'POST' })).json()
    expect(challenge.accepts[0]).toMatchObject({ maxAmountRequired: String(PASS_PRICE), payTo: creator.address })
    expect((await data(client, 'get_price', { feed_id: plain.id, entry_id: paid.plain![0].id })).pass).toBeNull()
  })

  test("search_feeds gives each feed's pass in a few words (or null)", async () => {
    const client = await httpClient(server.url)
    const feeds = (await data(client, 'search_feeds', { tags: ['notes'] })).feeds
    const passOf = (feed: { id: string }) => feeds.find((one: { id: string }) => one.id === feed.id).pass
    expect(passOf(daily)).toEqual(dailyTerms)
    expect(passOf(premium)).toEqual({
      amount: String(DEAR_PASS),
      amount_usdc: '0.500000',
      duration_s: 2_592_000,
      duration: '30 days',
      description: null,
    })
    expect(passOf(plain)).toBeNull()
    // A change of terms, or the pass taken off sale, shows at once (a kept answer is dropped by the write).
    expect((await call(server.url, 'DELETE', `/v1/feeds/${plain.id}/pass`, { wallet: creator })).status).toBe(404)
    expect((await passOffer(plain, 20_000n, 3600, null)).status).toBe(200)
    const again = (await data(client, 'search_feeds', { tags: ['notes'] })).feeds.find((one: { id: string }) => one.id === plain.id)
    expect(again.pass).toMatchObject({ amount: '20000', duration: '1 hour' })
    expect((await call(server.url, 'DELETE', `/v1/feeds/${plain.id}/pass`, { wallet: creator })).status).toBe(204)
    expect((await data(client, 'get_price', { feed_id: plain.id, entry_id: paid.plain![0].id })).pass).toBeNull()
  })
})

describe("buy_pass with the operator's wallet (trellis mcp)", () => {
  test('offered with buy_entry, only with a wallet; get_price names it', async () => {
    const agent = await agentWith(generatePrivateKey())
    expect((await agent.client.listTools()).tools.map((tool) => tool.name)).toContain('buy_pass')
    const price = await data(agent.client, 'get_price', { feed_id: daily.id, entry_id: paid.daily![0].id })
    expect(price.pass.how_to_buy).toBe('buy_pass')
    const keyless = await stdioClient(front.url)
    expect((await keyless.client.listTools()).tools.map((tool) => tool.name)).not.toContain('buy_pass')
  })

  test('a real purchase: paid once on chain, one ledger row of kind pass; then every paid entry is read with no payment', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    // Room for the pass and less than one entry more: the session's spent total counts the pass.
    const agent = await agentWith(buyer.privateKey, { TRELLIS_MCP_MAX_PER_SESSION: '55000' })
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const bought = await data(agent.client, 'buy_pass', { feed_id: daily.id, max_price: String(PASS_PRICE) })
    expect(bought.purchase).toMatchObject({ paid: true, amount: String(PASS_PRICE), amount_usdc: '0.050000', payer: buyer.address })
    const hash: string = bought.purchase.transaction
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(bought.session).toEqual({ spent: String(PASS_PRICE), left: '5000' })
    expect(bought.pass).toMatchObject({ feed_id: daily.id, holder: buyer.address, transaction_id: expect.stringMatching(/^tx_/) })
    expect(bought.pass.expires_at - bought.pass.starts_at).toBe(DAY)
    expect(bought.pass.expires_at_iso).toBe(new Date(bought.pass.expires_at * 1000).toISOString())

    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PASS_PRICE)
    expect(await chain.balanceOf(creator.address)).toBe(before.creator + PASS_PRICE)
    const rows = (await ledgerOf(daily)).transactions
    expect(rows).toEqual([
      expect.objectContaining({
        id: bought.pass.transaction_id,
        kind: 'pass',
        entry_id: null,
        feed_id: daily.id,
        payer: buyer.address,
        amount: String(PASS_PRICE),
        transaction_hash: hash,
      }),
    ])
    expect(front.payments(passPath(daily))).toHaveLength(1)

    // Held: get_entry reads a paid entry, buy_entry reads another without paying; nothing more is charged.
    const read = await run(agent.client, 'get_entry', { feed_id: daily.id, entry_id: paid.daily![0].id })
    expect(read.structuredContent).toMatchObject({ readable: true })
    expect(unfenced(read.content[1])).toBe('daily note 0')
    const viaBuy = await run(agent.client, 'buy_entry', { feed_id: daily.id, entry_id: paid.daily![1].id })
    expect((viaBuy.structuredContent as any).purchase).toEqual({
      paid: false,
      reason: 'this wallet owns the entry, bought it, or holds a pass to its feed: nothing was paid',
    })
    expect(unfenced(viaBuy.content[1])).toBe('daily note 1')
    for (const entry of paid.daily!) expect(front.payments(entry.id)).toEqual([])
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PASS_PRICE)
    expect((await ledgerOf(daily)).transactions).toHaveLength(1)

    // The pass counts against the session cap: an entry of another feed no longer fits, refused before signing.
    expect(await refusal(agent.client, 'buy_entry', { feed_id: plain.id, entry_id: paid.plain![0].id })).toBe(
      'refused: this purchase costs 10000 (0.010000 USDC); with 50000 (0.050000 USDC) already spent ' +
        'in this session, it would exceed the per-session cap of 55000 (0.055000 USDC) set by ' +
        'TRELLIS_MCP_MAX_PER_SESSION; nothing was signed',
    )
    expect(await refusal(agent.client, 'buy_pass', { feed_id: daily.id })).toContain('exceed the per-session cap')
    expect(front.payments(paid.plain![0].id)).toEqual([])
    expect(front.payments(passPath(daily))).toHaveLength(1)
  })

  test('over the per-call cap, over max_price, its own feed, no pass on sale: refused, nothing signed, nothing charged', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const agent = await agentWith(buyer.privateKey)
    const balance = await chain.balanceOf(buyer.address)
    const payments = front.payments('/pass/purchases').length
    expect(await refusal(agent.client, 'buy_pass', { feed_id: premium.id })).toBe(
      'refused: this purchase costs 500000 (0.500000 USDC), over the per-call cap of 100000 (0.100000 ' +
        'USDC) set by TRELLIS_MCP_MAX_PER_CALL; nothing was signed',
    )
    expect(await refusal(agent.client, 'buy_pass', { feed_id: daily.id, max_price: String(PASS_PRICE - 1n) })).toBe(
      'refused: the pass costs 50000 units, more than the max_price of 49999 given; nothing was signed',
    )
    expect(await refusal(agent.client, 'buy_pass', { feed_id: plain.id })).toStartWith('Trellis answered 404 PASS_NOT_FOUND')
    // The feed's owner reads everything: it is not sold its own pass.
    const key = generatePrivateKey()
    const own = await createFeed(server.url, privateKeyToAccount(key), { name: 'Mine' })
    expect(
      (
        await call(server.url, 'PUT', `/v1/feeds/${own.id}/pass`, {
          wallet: privateKeyToAccount(key),
          body: { price: { amount: '1000' }, duration_s: 60 },
        })
      ).status,
    ).toBe(200)
    const owner = await agentWith(key)
    expect(await refusal(owner.client, 'buy_pass', { feed_id: own.id })).toBe(
      'refused: this wallet owns the feed and reads every entry of it without a pass; nothing was signed',
    )
    expect(front.payments('/pass/purchases')).toHaveLength(payments) // no payment left either process
    expect((await ledgerOf(premium)).pagination.total_count).toBe(0)
    expect(await chain.balanceOf(buyer.address)).toBe(balance)
    // Still answering, and the session spent nothing.
    expect((await data(agent.client, 'get_price', { feed_id: daily.id, entry_id: paid.daily![2].id })).pass.amount).toBe(String(PASS_PRICE))
  })

  test('a payment kept by the server: the agent is told it may still be charged, it stays spent, and the chain agrees', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const agent = await agentWith(buyer.privateKey, { TRELLIS_MCP_MAX_PER_SESSION: String(PASS_PRICE) })
    const before = await chain.balanceOf(buyer.address)
    front.behaviour.keepPayments = true
    let told: string
    try {
      told = await refusal(agent.client, 'buy_pass', { feed_id: daily.id })
    } finally {
      front.behaviour.keepPayments = false
    }
    expect(told).toContain('the signed authorization left this process')
    expect(told).toContain('may still be charged')
    expect(told).not.toContain('nothing was charged')
    expect(told).not.toStartWith('refused:')
    // Counted as spent: no second payment fits.
    expect(await refusal(agent.client, 'buy_pass', { feed_id: daily.id })).toContain('1 of them sent and not settled')
    // Whoever kept it cashes it: the pass is bought, once; the agent's wallet then reads the feed.
    const [kept] = front.kept.splice(0)
    expect(kept!.path).toBe(passPath(daily))
    const cashed = await fetch(`${server.url}${kept!.path}`, { method: 'POST', headers: { 'payment-signature': kept!.header } })
    expect(cashed.status).toBe(201)
    expect(await chain.balanceOf(buyer.address)).toBe(before - PASS_PRICE)
    expect((await data(agent.client, 'get_entry', { feed_id: daily.id, entry_id: paid.daily![2].id })).readable).toBe(true)
    expect(await chain.balanceOf(buyer.address)).toBe(before - PASS_PRICE)
  })
})
