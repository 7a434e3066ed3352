// Cheap prices made visible (issue 40): a price below what one settlement typically costs on the server's network is
// accepted, and its answer says so — the Trellis-Warning header and an optional price_warning field — at every write
// that sets or keeps it: create (JSON and multipart), edit, and a pass put on sale. A price at or above the cost, and a
// free entry, answer exactly as before. The test server settles on Base Sepolia, whose cost is Base's: 0.0014 USDC.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Reply, type Wallet } from '../dev/api.ts'
import { CHAINS, NETWORKS } from '../src/config/networks.ts'
import { cheapPriceWarning, warningHeader } from '../src/domain/cheap-prices.ts'

const COST = '1400'
let server: TestServer
let owner: Wallet
let feedId: string

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner, { name: 'Micro' })).id
})
afterAll(async () => {
  await server?.dispose()
})

const entries = () => `/v1/feeds/${feedId}/entries`
const create = (body: Record<string, unknown>) =>
  call(server.url, 'POST', entries(), { wallet: owner, body: { content_base64: b64('words'), mime_type: 'text/plain', ...body } })
const paid = (amount: string) => ({ is_free: false, price: { amount, currency: 'USDC' } })

/** The RFC 8941 item of a Trellis-Warning header, read the way a client would: its code and its parameters. */
function parsed(header: string | null): { code: string; params: Record<string, string> } | null {
  if (header === null) return null
  const [code, ...rest] = header.split(/;(?=[a-z]+=)/)
  const params = Object.fromEntries(
    rest.map((part) => {
      const [name, value] = [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]
      return [name, value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value]
    }),
  )
  return { code: code!, params }
}

/** Asserts the answer warns about `price` (smallest units) for `what` ("This entry", "This pass"). */
function expectWarned(reply: Reply, price: string, what: string) {
  const header = parsed(reply.headers.get('trellis-warning'))
  expect(header).toMatchObject({ code: 'price_below_settlement_cost', params: { cost: COST, network: 'base-sepolia' } })
  expect(reply.body.price_warning).toEqual({
    code: 'price_below_settlement_cost',
    message: header!.params.message,
    settlement_cost: COST,
    network: 'base-sepolia',
  })
  const message = reply.body.price_warning.message as string
  expect(message).toStartWith(`${what} costs ${Number(price) / 1e6} USDC, below about 0.0014 USDC`)
  expect(message).toContain('on Base Sepolia')
  expect(message).toContain(what === 'This entry' ? 'Sell a pass instead' : 'price it above that cost')
}

function expectQuiet(reply: Reply) {
  expect(reply.status).toBeLessThan(300)
  expect(reply.headers.get('trellis-warning')).toBeNull()
  expect(reply.body).not.toHaveProperty('price_warning')
}

describe('the network table', () => {
  test('every chain has a settlement cost; a test network has its mainnet’s, so it warns as a live server would', () => {
    for (const facts of Object.values(CHAINS)) expect(facts.typicalSettlementCost).toBeGreaterThan(0n)
    expect(CHAINS.base.typicalSettlementCost).toBe(1_400n)
    expect(CHAINS['base-sepolia'].typicalSettlementCost).toBe(CHAINS.base.typicalSettlementCost)
    expect(CHAINS['ethereum-sepolia'].typicalSettlementCost).toBe(CHAINS.ethereum.typicalSettlementCost)
    expect(CHAINS['polygon-amoy'].typicalSettlementCost).toBe(CHAINS.polygon.typicalSettlementCost)
    expect(NETWORKS['base-sepolia'].typicalSettlementCost).toBe(1_400n)
  })

  test('the warning starts one unit below the cost; its header quotes what needs quoting', () => {
    const base = NETWORKS.base
    expect(cheapPriceWarning(1_399n, base, 'entry')?.settlement_cost).toBe(COST)
    expect(cheapPriceWarning(1_400n, base, 'entry')).toBeNull()
    expect(cheapPriceWarning(0n, base, 'entry')).toBeNull()
    const odd = { ...cheapPriceWarning(1n, base, 'entry')!, message: 'say "hi" \\ bye' }
    expect(parsed(warningHeader(odd))?.params.message).toBe('say "hi" \\ bye')
  })
})

describe('publishing and repricing answer with the warning', () => {
  test('create (JSON): below the cost warns; at or above it and free entries do not', async () => {
    const cheap = await create({ title: 'A tenth of a cent', ...paid('1000') })
    expect(cheap.status).toBe(201)
    expect(cheap.body).toMatchObject({ is_free: false, price: '1000', title: 'A tenth of a cent' })
    expectWarned(cheap, '1000', 'This entry')
    expectQuiet(await create(paid(COST)))
    expectQuiet(await create(paid('250000')))
    expectQuiet(await create({}))
    expectQuiet(await create({ is_free: true }))
    // The warning is the write's: a read of the same entry is the entry as before.
    expectQuiet(await call(server.url, 'GET', `${entries()}/${cheap.body.id}`, { wallet: owner }))
  })

  test('create (multipart): the same warning as the JSON form', async () => {
    const post = async (amount: string) => {
      const form = new FormData()
      form.append('content', new Blob(['a file'], { type: 'text/plain' }), 'a.txt')
      form.append('is_free', 'false')
      form.append('price', JSON.stringify({ amount, currency: 'USDC' }))
      const response = await fetch(`${server.url}${entries()}`, {
        method: 'POST',
        headers: await authHeaders(server.url, owner),
        body: form,
      })
      return { status: response.status, headers: response.headers, body: await response.json(), text: '' } as Reply
    }
    const cheap = await post('999')
    expect(cheap.status).toBe(201)
    expectWarned(cheap, '999', 'This entry')
    expectQuiet(await post(COST))
  })

  test('edit: a price set or kept below the cost warns; at the cost, or made free, it does not', async () => {
    const entry = await createEntry(server.url, owner, feedId, paid('50000'))
    const edit = (body: unknown) => call(server.url, 'PATCH', `${entries()}/${entry.id}`, { wallet: owner, body })
    const cheaper = await edit({ price: { amount: '500', currency: 'USDC' } })
    expect(cheaper.status).toBe(200)
    expectWarned(cheaper, '500', 'This entry')
    expectWarned(await edit({ title: 'still cheap' }), '500', 'This entry')
    expectQuiet(await edit({ price: { amount: COST, currency: 'USDC' } }))
    await edit({ price: { amount: '1', currency: 'USDC' } })
    expectQuiet(await edit({ is_free: true }))
  })

  test('a pass put on sale below the cost warns; at or above it does not, and reading the offer never does', async () => {
    const put = (amount: string) =>
      call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, {
        wallet: owner,
        body: { price: { amount, currency: 'USDC' }, duration_s: 3600 },
      })
    const cheap = await put('1000')
    expect(cheap.status).toBe(200)
    expect(cheap.body.price).toEqual({ amount: '1000', currency: 'USDC' })
    expectWarned(cheap, '1000', 'This pass')
    expectQuiet(await call(server.url, 'GET', `/v1/feeds/${feedId}/pass`))
    expectQuiet(await put(COST))
    expectQuiet(await put('5000000'))
  })

  test('a browser on another origin may read the header', async () => {
    const reply = await create(paid('1000'))
    expect(reply.headers.get('access-control-expose-headers')).toContain('Trellis-Warning')
  })
})
