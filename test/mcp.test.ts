// The MCP server for AI agents, driven by the MCP SDK's own client: `trellis mcp` over stdio (spawned as an operator
// runs it) and /mcp over Streamable HTTP, against a real server settling on a real chain (anvil + the EIP-3009 test
// USDC). Money is checked on chain and in the ledger; what the stdio process sends is recorded by a proxy in front of
// the server, so "nothing was signed" and "the key never leaves the process" are checked on the wire.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { BASE_SEPOLIA_USDC, startChain, type Buyer, type TestChain } from '../dev/chain.ts'
import { parseCommand } from '../src/command-line.ts'
import { SpendingCaps } from '../src/mcp/spending.ts'
import {
  closeClients,
  data,
  postMcp,
  toolCall,
  httpClient as httpOf,
  refusal,
  run,
  stdioClient as stdioOf,
  unfenced,
} from './helpers/mcp-client.ts'
import { mcpFront, type McpFront } from './helpers/mcp-front.ts'

const ROOT = join(import.meta.dir, '..')
const PRICE = 10_000n // 0.01 USDC
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 9)])
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const READING = ['get_entry', 'get_price', 'list_categories', 'list_entries', 'search_entries', 'search_feeds']

let chain: TestChain
let server: TestServer
let creator: Wallet
let categories: Array<{ id: string; name: string }>
let alpine: any // feed: Finance, tags weather + alps, a free text, a free JSON, a free PNG, two paid entries
let market: any // feed: Sports, tag finance, one expensive paid entry
let empty: any // a feed with no entry: never listed
const entries: Record<string, any> = {}

/** A front of the server: every request `trellis mcp` sent through it (method, path, headers and body as text). */
let front: McpFront

beforeAll(async () => {
  chain = await startChain()
  front = mcpFront(() => server.url)
  // The server's public URL is the front's: its sign-in messages name the host `trellis mcp` is pointed at (it
  // signs no other), as behind any honest reverse proxy.
  server = await startTestServer({ ...chain.env, TRELLIS_PUBLIC_URL: front.url })
  creator = newWallet()
  categories = (await call(server.url, 'GET', '/v1/categories?page_size=100')).body.data
  const finance = categories.find((c) => c.name === 'Finance')!
  const sports = categories.find((c) => c.name === 'Sports')!
  alpine = await createFeed(server.url, creator, {
    name: 'Alpine Weather',
    description: 'Daily mountain FORECASTS for hikers',
    tags: ['weather', 'alps'],
    category_id: finance.id,
  })
  market = await createFeed(server.url, creator, {
    name: 'Market notes',
    description: 'Prices and tips',
    tags: ['finance'],
    category_id: sports.id,
  })
  empty = await createFeed(server.url, creator, { name: 'Empty forecasts', tags: ['weather'] })
  entries.text = await createEntry(server.url, creator, alpine.id, {
    content_base64: b64('Sunny above 2000 m.'),
    mime_type: 'text/plain',
    title: 'Today',
  })
  entries.json = await createEntry(server.url, creator, alpine.id, {
    content_base64: b64('{"temp":-3}'),
    mime_type: 'application/json',
    title: 'Data',
  })
  entries.png = await createEntry(server.url, creator, alpine.id, { content_base64: b64(PNG), mime_type: 'image/png', title: 'Map' })
  entries.paid = await createEntry(server.url, creator, alpine.id, {
    content_base64: b64('Storm on Friday.'),
    title: 'Tomorrow',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  entries.paid2 = await createEntry(server.url, creator, alpine.id, {
    content_base64: b64('Snow next week.'),
    title: 'Next week',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  entries.dear = await createEntry(server.url, creator, market.id, {
    content_base64: b64('The big tip.'),
    title: 'Dear',
    is_free: false,
    price: { amount: '200000', currency: 'USDC' },
  })
}, 120_000)

afterAll(async () => {
  await closeClients()
  front?.stop()
  await server?.dispose()
  await chain?.stop()
})

const stdioClient = (env: Record<string, string> = {}, url = front.url) => stdioOf(url, env)
const httpClient = () => httpOf(server.url)
const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort()
const ids = (items: Array<{ id: string }>) => items.map((item) => item.id).sort()
const ledger = async (entryId: string) => (await call(server.url, 'GET', `/v1/transactions?entry_id=${entryId}`)).body
/** Requests the stdio process sent that carried a payment for this entry. */
const paymentsFor = (entryId: string) => front.payments(entryId)

describe('the tools each transport lists', () => {
  test('/mcp (Streamable HTTP) lists the reading tools only: it holds no key', async () => {
    const client = await httpClient()
    expect(await names(client)).toEqual(READING)
    expect(client.getServerVersion()).toMatchObject({ name: 'trellis' })
    for (const tool of (await client.listTools()).tools) {
      expect(tool.description!.length).toBeGreaterThan(40)
      expect(tool.inputSchema.type).toBe('object')
    }
  })

  test('trellis mcp without a key adds list_purchases; with one, buying and publishing; stdout carries MCP only', async () => {
    const plain = await stdioClient()
    expect(await names(plain.client)).toEqual([...READING, 'list_purchases'].sort())
    const keyed = await stdioClient({ TRELLIS_MCP_WALLET_KEY: generatePrivateKey() })
    expect(await names(keyed.client)).toEqual(
      [...READING, 'buy_entry', 'buy_pass', 'create_entry', 'create_feed', 'get_analytics', 'list_purchases'].sort(),
    )
    expect([...plain.errors, ...keyed.errors]).toEqual([])
    expect(plain.stderr.join('')).toContain('no wallet')
    expect(keyed.stderr.join('')).toContain('at most 0.100000 USDC a purchase and 1.000000 USDC in all') // the defaults
  })

  test('a bad configuration stops with one line naming it (the key never echoed), exit 2', async () => {
    const refused = (argv: string[], env: Record<string, string>) => {
      try {
        parseCommand(argv, env)
      } catch (error) {
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    const secret = `0x${'ab'.repeat(31)}zz`
    const message = refused(['mcp'], { TRELLIS_MCP_WALLET_KEY: secret })
    expect(message).toBe('TRELLIS_MCP_WALLET_KEY must be 0x followed by 64 hex characters (a private key)')
    expect(refused(['mcp', '--url', 'ftp://x'], {})).toBe('--url must be an http(s) URL')
    expect(refused(['mcp'], { TRELLIS_MCP_MAX_PER_CALL: '0.5' })).toStartWith(
      'TRELLIS_MCP_MAX_PER_CALL must be a whole number of USDC smallest units',
    )
    expect(refused(['mcp', '--port', '1'], {})).toBe('unknown option --port for trellis mcp (see trellis --help)')
    // A server variable it does not use cannot stop it.
    expect(parseCommand(['mcp'], { TRELLIS_NETWORK: 'nope' })).toMatchObject({
      kind: 'mcp',
      options: { url: 'http://127.0.0.1:8402', walletKey: null, maxPerCall: 100_000n, maxPerSession: 1_000_000n },
    })
    const spawned = Bun.spawn([process.execPath, 'src/main.ts', 'mcp'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, TRELLIS_MCP_WALLET_KEY: secret },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(spawned.stdout).text(),
      new Response(spawned.stderr).text(),
      spawned.exited,
    ])
    expect([code, stdout, stderr]).toEqual([2, '', `trellis: ${message}\n`])
  })
})

describe('finding and reading (over /mcp)', () => {
  test('search_feeds by words, category (name or id), tags and owner; a feed with no entry is not listed', async () => {
    const client = await httpClient()
    const search = async (args: Record<string, unknown>) => ids((await data(client, 'search_feeds', args)).feeds)
    expect(await search({ text: 'forecasts' })).toEqual([alpine.id]) // case-insensitive, in the description
    expect(await search({ text: 'market NOTES' })).toEqual([market.id])
    expect(await search({ text: '100%_off' })).toEqual([]) // LIKE's wildcards are plain characters here
    expect(await search({ category: 'Finance' })).toEqual([alpine.id])
    expect(await search({ category: categories.find((c) => c.name === 'Sports')!.id })).toEqual([market.id])
    expect(await search({ tags: ['alps'] })).toEqual([alpine.id])
    expect(await search({ tags: ['weather', 'finance'] })).toEqual(ids([alpine, market]))
    expect(await search({ tags: ['weather'], text: 'tips' })).toEqual([])
    expect(await search({ owner: creator.address })).toEqual(ids([alpine, market, empty])) // an owner's listing shows every feed
    expect(await search({ text: 'forecasts', owner: creator.address })).toEqual(ids([alpine, empty]))
    const first = await data(client, 'search_feeds', { tags: ['weather', 'finance'], page_size: 1 })
    // (Not toMatchObject with expect.any: Bun's puts the matcher in the object it checks.)
    expect([first.has_more, typeof first.next_page_token]).toEqual([true, 'string'])
    const second = await data(client, 'search_feeds', { tags: ['weather', 'finance'], page_size: 1, page_token: first.next_page_token })
    expect(ids([...first.feeds, ...second.feeds])).toEqual(ids([alpine, market]))
    expect((await data(client, 'list_categories', { text: 'spo' })).categories.map((c: any) => c.name)).toEqual(['Sports'])
  })

  test("search_entries: a free entry's text, a paid one by its title only, with its feed's name and a marked snippet", async () => {
    const client = await httpClient()
    const found = await data(client, 'search_entries', { text: 'sunny' })
    // The snippet is the engine's: the body's words around the match on SQLite, the title's too on PostgreSQL.
    expect(found.entries.map((e: any) => e.snippet)).toEqual([expect.stringContaining('«Sunny» above')])
    expect(found.entries.map(({ snippet: _, ...e }: any) => e)).toEqual([
      {
        id: entries.text.id,
        feed_id: alpine.id,
        feed_name: alpine.name,
        title: 'Today',
        description: null,
        tags: [],
        mime_type: 'text/plain',
        is_free: true,
        price: '0',
        price_usdc: '0.000000',
      },
    ])
    expect((await data(client, 'search_entries', { text: 'storm' })).entries).toEqual([]) // only in a paid entry's content
    expect((await data(client, 'search_entries', { text: 'tomorrow' })).entries.map((e: any) => e.id)).toEqual([entries.paid.id])
    expect(await refusal(client, 'search_entries', { text: '' })).toContain('Input validation error')
  })

  test(
    'list_entries and get_entry: free text and JSON inline, a small PNG as an image; a paid one ' + 'gives its price, not its content',
    async () => {
      const client = await httpClient()
      const listed = await data(client, 'list_entries', { feed_id: alpine.id })
      expect(ids(listed.entries)).toEqual(ids([entries.text, entries.json, entries.png, entries.paid, entries.paid2]))
      expect(listed.entries.find((e: any) => e.id === entries.paid.id)).toMatchObject({
        is_free: false,
        price: String(PRICE),
        price_usdc: '0.010000',
      })
      expect(ids((await data(client, 'list_entries', { feed_id: alpine.id, is_free: false })).entries)).toEqual(
        ids([entries.paid, entries.paid2]),
      )

      const text = await run(client, 'get_entry', { feed_id: alpine.id, entry_id: entries.text.id })
      expect(text.structuredContent).toMatchObject({
        readable: true,
        entry: { id: entries.text.id, title: 'Today' },
        content: { mime_type: 'text/plain', size_bytes: 19, shown: 'text' },
      })
      expect(unfenced(text.content[1])).toBe('Sunny above 2000 m.')
      const json = await run(client, 'get_entry', { feed_id: alpine.id, entry_id: entries.json.id })
      expect(unfenced(json.content[1])).toBe('{"temp":-3}')
      const png = await run(client, 'get_entry', { feed_id: alpine.id, entry_id: entries.png.id })
      expect(png.content[1]).toEqual({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' })

      const paid = await data(client, 'get_entry', { feed_id: alpine.id, entry_id: entries.paid.id })
      expect(paid).toMatchObject({ readable: false, is_free: false, price: { amount: String(PRICE) } })
      expect(JSON.stringify(paid)).not.toContain('Storm')
    },
  )

  test("get_price gives the x402 requirement of the entry's 402: amount, asset, network, pay-to", async () => {
    const client = await httpClient()
    const price = await data(client, 'get_price', { feed_id: alpine.id, entry_id: entries.paid.id })
    expect(price).toMatchObject({
      is_free: false,
      amount: String(PRICE),
      amount_usdc: '0.010000',
      asset: BASE_SEPOLIA_USDC,
      asset_name: 'USDC',
      network: 'eip155:84532',
      pay_to: creator.address,
      scheme: 'exact',
      resource: `${front.url}/v1/feeds/${alpine.id}/entries/${entries.paid.id}`,
    })
    // The same requirement the API's 402 gives any client.
    const challenge = await fetch(`${server.url}/v1/feeds/${alpine.id}/entries/${entries.paid.id}`)
    expect(challenge.status).toBe(402)
    const header = JSON.parse(Buffer.from(challenge.headers.get('payment-required')!, 'base64').toString())
    expect(price.accepts).toEqual(header.accepts)
    expect(await data(client, 'get_price', { feed_id: alpine.id, entry_id: entries.text.id })).toMatchObject({ is_free: true, amount: '0' })
  })

  test('bad input is a tool error, never a crash: unknown and malformed ids, unknown tools, bad arguments', async () => {
    const client = await httpClient()
    expect(await refusal(client, 'get_entry', { feed_id: alpine.id, entry_id: UNKNOWN })).toStartWith('Trellis answered 404')
    expect(await refusal(client, 'get_price', { feed_id: UNKNOWN, entry_id: UNKNOWN })).toStartWith('Trellis answered 404')
    expect(await refusal(client, 'list_entries', { feed_id: UNKNOWN })).toStartWith('Trellis answered 404')
    expect(await refusal(client, 'get_entry', { feed_id: alpine.id, entry_id: '../../v1/transactions' })).toContain(
      'entry id must be a UUID',
    )
    expect(await refusal(client, 'search_feeds', { page_size: 1000 })).toContain('Input validation error')
    expect(await refusal(client, 'search_feeds', { page_token: 'forged' })).toStartWith('Trellis answered 422')
    expect(await refusal(client, 'buy_entry', { feed_id: alpine.id, entry_id: entries.paid.id })).toContain('buy_entry not found')
    expect(await names(client)).toEqual(READING) // still answering
  })

  test('/mcp over plain HTTP: GET and DELETE 405 (stateless), a wrong Accept 406, bad JSON 400', async () => {
    const post = (body: string, accept = 'application/json, text/event-stream') =>
      fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body })
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(`${server.url}/mcp`, { method })
      expect([answer.status, answer.headers.get('allow')]).toEqual([405, 'POST'])
    }
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'application/json')).status).toBe(406)
    const bad = await post('{"jsonrpc":')
    expect([bad.status, (await bad.json()).error.code]).toEqual([400, -32700])
    // A client may call a tool without initializing first: each request is answered on its own.
    const listed = await post('{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
    expect(await listed.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } })
    // A plain tools/list is answered from the SDK's first answer (src/mcp/http.ts): the same bytes the SDK gives one
    // it answers itself (a _meta sends it there), but for the id.
    const cached = await (await post('{"jsonrpc":"2.0","id":8,"method":"tools/list"}')).text()
    const fromSdk = await (await post('{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}')).text()
    expect(cached).toBe(fromSdk)
  })
})

describe("kept tool answers over HTTP (Bun's router answers them before Elysia)", () => {
  test('the same call answered again: the same result under each id, with the headers of the first; a write makes it anew', async () => {
    const post = (message: unknown) => postMcp(server.url, message)
    const search = (id: number | string) => toolCall(id, 'search_feeds', { tags: ['alps'] })
    const first = await post(search(1))
    const firstText = await first.text()
    const again = await post(search('x'))
    expect([first.status, again.status]).toEqual([200, 200])
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.headers.get('access-control-allow-origin')).toBe(first.headers.get('access-control-allow-origin'))
    // Kept: the result's untrusted-content boundary is the first answer's, drawn once.
    expect(await again.text()).toBe(firstText.replace(/"id":1}$/, '"id":"x"}'))
    // A message the fast path does not take whole (an extra _meta) is the SDK's, and the same result.
    const withMeta = await post({ ...search(2), params: { ...search(2).params, _meta: { progressToken: 't' } } })
    expect(JSON.parse(await withMeta.text()).result.structuredContent).toEqual(JSON.parse(firstText).result.structuredContent)
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'Alpine huts', tags: ['alps'] })
    await createEntry(server.url, owner, feed.id)
    const after = JSON.parse(await (await post(search(3))).text())
    expect(after.result.structuredContent.feeds.map((f: { name: string }) => f.name)).toContain('Alpine huts')
  })
})

describe('buying with the operator wallet (trellis mcp over stdio)', () => {
  let buyer: Buyer
  let agent: Awaited<ReturnType<typeof stdioClient>>

  beforeAll(async () => {
    buyer = await chain.newFundedBuyer(1_000_000n)
    // Caps: 0.10 USDC a purchase, 0.015 USDC in all: one 0.01 purchase fits, a second does not.
    agent = await stdioClient(
      { TRELLIS_MCP_WALLET_KEY: buyer.privateKey, TRELLIS_MCP_MAX_PER_CALL: '100000', TRELLIS_MCP_MAX_PER_SESSION: '15000' },
      front.url,
    )
  })

  test('a real purchase: paid once on chain, one ledger row with its transaction, the content returned', async () => {
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const bought = await run(agent.client, 'buy_entry', { feed_id: alpine.id, entry_id: entries.paid.id, max_price: String(PRICE) })
    expect(bought.isError).toBeFalsy()
    const result = bought.structuredContent as any
    const hash: string = result.purchase.transaction
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(result.purchase).toMatchObject({ paid: true, amount: String(PRICE), amount_usdc: '0.010000', payer: buyer.address })
    expect(result.session).toEqual({ spent: String(PRICE), left: '5000' })
    expect(unfenced(bought.content[1])).toBe('Storm on Friday.')

    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PRICE)
    expect(await chain.balanceOf(creator.address)).toBe(before.creator + PRICE)
    const rows = await ledger(entries.paid.id)
    expect(rows.transactions).toEqual([
      expect.objectContaining({ payer: buyer.address, pay_to: creator.address, amount: String(PRICE), transaction_hash: hash }),
    ])
    expect(paymentsFor(entries.paid.id)).toHaveLength(1)

    // Bought: read again (signed in), never paid twice.
    const again = await data(agent.client, 'buy_entry', { feed_id: alpine.id, entry_id: entries.paid.id })
    expect(again.purchase).toMatchObject({ paid: false })
    expect((await data(agent.client, 'get_entry', { feed_id: alpine.id, entry_id: entries.paid.id })).readable).toBe(true)
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PRICE)
    expect((await ledger(entries.paid.id)).transactions).toHaveLength(1)

    const purchases = await data(agent.client, 'list_purchases')
    expect(purchases).toMatchObject({ wallet_address: buyer.address, total_count: 1 })
    expect(purchases.purchases).toEqual([
      expect.objectContaining({ entry_id: entries.paid.id, amount: String(PRICE), amount_usdc: '0.010000', transaction_hash: hash }),
    ])
  })

  test('over the per-call cap, over the per-session cap, over max_price: refused, nothing signed, nothing charged', async () => {
    const balance = await chain.balanceOf(buyer.address)
    expect(await refusal(agent.client, 'buy_entry', { feed_id: market.id, entry_id: entries.dear.id })).toBe(
      'refused: this purchase costs 200000 (0.200000 USDC), over the per-call cap of 100000 (0.100000 ' +
        'USDC) set by TRELLIS_MCP_MAX_PER_CALL; nothing was signed',
    )
    expect(await refusal(agent.client, 'buy_entry', { feed_id: alpine.id, entry_id: entries.paid2.id })).toBe(
      'refused: this purchase costs 10000 (0.010000 USDC); with 10000 (0.010000 USDC) already spent ' +
        'in this session, it would exceed the per-session cap of 15000 (0.015000 USDC) set by ' +
        'TRELLIS_MCP_MAX_PER_SESSION; nothing was signed',
    )
    expect(await refusal(agent.client, 'buy_entry', { feed_id: alpine.id, entry_id: entries.paid2.id, max_price: '9999' })).toBe(
      'refused: the entry costs 10000 units, more than the max_price of 9999 given; nothing was signed',
    )
    for (const entry of [entries.dear, entries.paid2]) {
      expect(paymentsFor(entry.id)).toEqual([]) // no payment left the process
      expect((await ledger(entry.id)).pagination.total_count).toBe(0)
    }
    expect(await chain.balanceOf(buyer.address)).toBe(balance)
  })

  test('the key never left the process: not in any request, header or payment, nor in what it logged', () => {
    expect(front.seen.length).toBeGreaterThan(5)
    const key = buyer.privateKey.slice(2).toLowerCase()
    const decoded = (value: string | undefined) => (value ? Buffer.from(value, 'base64').toString('utf8') : '')
    for (const request of front.seen) {
      const seen = [
        request.path,
        JSON.stringify(request.headers),
        request.body,
        decoded(request.headers['payment-signature']),
        decoded(request.headers['x-payment']),
      ]
        .join('\n')
        .toLowerCase()
      expect(seen).not.toContain(key)
    }
    expect(agent.stderr.join('').toLowerCase()).not.toContain(key)
    expect(agent.errors).toEqual([])
  })
})

describe('the caps hold what purchases in progress will spend', () => {
  test('a hold counts until it is spent or released; a purchase that fits only alone is refused while another holds', () => {
    const caps = new SpendingCaps(100n, 150n)
    const first = caps.hold(100n)
    if (!first.ok) throw new Error(first.reason)
    const second = caps.hold(100n)
    expect(second).toEqual({ ok: false, reason: expect.stringContaining('100 (0.000100 USDC) held by purchases in progress') })
    first.hold.release()
    first.hold.spend() // a hold ends once
    expect([caps.spent, caps.left]).toEqual([0n, 150n])
    const third = caps.hold(100n)
    if (!third.ok) throw new Error(third.reason)
    third.hold.spend()
    expect([caps.spent, caps.left]).toEqual([100n, 50n])
    expect(caps.hold(51n).ok).toBe(false)
    expect(caps.hold(50n).ok).toBe(true)
    expect(caps.hold(101n)).toEqual({ ok: false, reason: expect.stringContaining('over the per-call cap') })
  })

  test('two purchases at once with room for one: one is paid, the other refused before signing', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const agent = await stdioClient({ TRELLIS_MCP_WALLET_KEY: buyer.privateKey, TRELLIS_MCP_MAX_PER_SESSION: '15000' })
    const before = await chain.balanceOf(buyer.address)
    const results = await Promise.all(
      [entries.paid, entries.paid2].map((entry) => run(agent.client, 'buy_entry', { feed_id: alpine.id, entry_id: entry.id })),
    )
    expect(results.filter((result) => !result.isError)).toHaveLength(1)
    const refused = results.find((result) => result.isError)!
    expect((refused.content[0] as { text: string }).text).toMatch(
      /^refused: this purchase costs 10000 .* per-session cap of 15000 .*nothing was signed$/,
    )
    expect(await chain.balanceOf(buyer.address)).toBe(before - PRICE)
    expect((await call(server.url, 'GET', `/v1/transactions?payer=${buyer.address}`)).body.pagination.total_count).toBe(1)
  })
})

describe("publishing with a creator's key", () => {
  test(
    'create_feed and create_entry (free and paid) publish as the wallet; the API shows them; the ' + 'owner reads its paid entry free',
    async () => {
      const key = generatePrivateKey()
      const owner = privateKeyToAccount(key)
      const { client } = await stdioClient({ TRELLIS_MCP_WALLET_KEY: key })
      const { feed } = await data(client, 'create_feed', {
        name: 'Agent digest',
        description: 'Written by an agent',
        tags: ['agents'],
        category_id: categories[0]!.id,
      })
      expect(feed).toMatchObject({
        name: 'Agent digest',
        owner_wallet_address: owner.address,
        tags: ['agents'],
        category_id: categories[0]!.id,
      })
      const free = (
        await data(client, 'create_entry', { feed_id: feed.id, mime_type: 'text/markdown', text: '# Hello\nfrom an agent', title: 'Hello' })
      ).entry
      const published = await data(client, 'create_entry', {
        feed_id: feed.id,
        mime_type: 'text/plain',
        text: 'paid words',
        title: 'Paid',
        price: '20000',
      })
      const paid = published.entry
      expect(free).toMatchObject({ is_free: true, mime_type: 'text/markdown' })
      expect(paid).toMatchObject({ is_free: false, price: '20000', price_usdc: '0.020000' })
      expect(published.warning).toBeUndefined()
      // Below the settlement cost (0.0014 USDC on Base Sepolia as on Base): published, and the answer says so first.
      const cheap = await data(client, 'create_entry', { feed_id: feed.id, mime_type: 'text/plain', text: 'cheap', price: '1000' })
      expect(cheap.warning).toContain('below about 0.0014 USDC')
      expect(cheap.warning).toContain('Sell a pass instead')
      expect(cheap.entry).toMatchObject({ is_free: false, price: '1000', price_usdc: '0.001000' })
      expect(cheap.entry.price_warning).toBeUndefined()

      expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body).toMatchObject({
        name: 'Agent digest',
        total_entries: 3,
        owner_wallet_address: owner.address,
      })
      expect(await (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${free.id}/content`)).text()).toBe('# Hello\nfrom an agent')
      expect((await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}`)).status).toBe(402)
      // The owner reads its own paid entry without paying.
      expect(unfenced((await run(client, 'get_entry', { feed_id: feed.id, entry_id: paid.id })).content[1])).toBe('paid words')

      expect(await refusal(client, 'create_entry', { feed_id: feed.id, mime_type: 'text/plain', title: 'nothing' })).toBe(
        'give the content as exactly one of text or content_base64',
      )
      expect(await refusal(client, 'create_entry', { feed_id: alpine.id, mime_type: 'text/plain', text: 'not mine' })).toStartWith(
        'Trellis answered 403',
      )
      expect(await refusal(client, 'create_entry', { feed_id: feed.id, mime_type: 'text/plain', text: 'x', price: '0.5' })).toContain(
        'Input validation error',
      )
    },
  )
})
