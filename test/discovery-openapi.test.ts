// Discovery through the API's own documents: the OpenAPI document (also at /openapi.json and
// /.well-known/openapi.json) marks every paid operation, and only those, with x-payment-info (price, networks, token,
// protocols); an agent that reads it finds a paid operation, fills it from the listing operation, and pays with an
// x402 client. /llms.txt describes the API for agents, and every link it gives answers.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any
let doc: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Documented' })
  await createEntry(server.url, owner, feed.id, {
    content_base64: b64('paid words'),
    mime_type: 'text/plain',
    title: 'Words',
    is_free: false,
    price: { amount: '25000', currency: 'USDC' },
  })
  doc = (await call(server.url, 'GET', '/openapi.json')).body
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.entries<any>(ops).map(([method, op]) => ({ path, method, op })))

test('one document at /openapi.json, /.well-known/openapi.json and /v1/openapi.json, pointing agents to llms.txt', async () => {
  expect((await call(server.url, 'GET', '/v1/openapi.json')).body).toEqual(doc)
  expect((await call(server.url, 'GET', '/.well-known/openapi.json')).body).toEqual(doc)
  expect(doc['x-discovery']).toEqual({ llmsTxtUrl: `${server.url}/llms.txt` })
  expect(doc.info['x-guidance']).toContain('x402')
})

test('every operation that may answer 402, and only those, carries x-payment-info', () => {
  const paid = operations().filter(({ op }) => op['x-payment-info'])
  expect(paid.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
    operations()
      .filter(({ op }) => op.responses['402'])
      .map(({ method, path }) => `${method} ${path}`)
      .sort(),
  )
  for (const expected of [
    'get /v1/feeds/{feed_id}/entries/{entry_id}',
    'get /v1/feeds/{feed_id}/entries/{entry_id}/content',
    'post /v1/feeds/{feed_id}/pass/purchases',
  ])
    expect(paid.map(({ method, path }) => `${method} ${path}`)).toContain(expected)
  for (const { op } of paid)
    expect(op['x-payment-info']).toEqual({
      price: { mode: 'dynamic', currency: 'USD', min: '0.000001', max: '9223372036854.775807' },
      protocols: [{ x402: { scheme: 'exact', network: 'eip155:84532', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' } }],
      networks: ['eip155:84532'],
      asset: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', symbol: 'USDC', decimals: 6 },
    })
})

test('an agent finds the paid operation in the document, fills it from the listing operation and pays', async () => {
  const { path } = operations().find(({ path, method, op }) => method === 'get' && op['x-payment-info'] && path.endsWith('/content'))!
  const listing = doc.paths['/v1/feeds/{feed_id}/entries'].get
  expect(listing['x-payment-info']).toBeUndefined()
  const listed = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries`)).body
  const entry = listed.data.find((e: any) => !e.is_free)
  const url = `${doc.servers[0].url}${path.replace('{feed_id}', feed.id).replace('{entry_id}', entry.id)}`
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const paid = await payingFetch(buyer)(url)
  expect([paid.status, await paid.text()]).toEqual([200, 'paid words'])
  expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - 25_000n)
}, 60_000)

test('/llms.txt says what is sold, how to pay, how to sign in and where MCP is; its links answer', async () => {
  const answer = await fetch(`${server.url}/llms.txt`)
  expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8')
  const text = await answer.text()
  expect(text).toStartWith('# Trellis\n\n> ')
  for (const words of ['x402', 'PAYMENT-SIGNATURE', 'X-PAYMENT', '/v1/auth/nonce', 'SIGN-IN-WITH-X', `${server.url}/mcp`, 'base-sepolia'])
    expect(text).toContain(words)
  const links = [...text.matchAll(/\]\((http[^)]+)\)/g)].map((m) => m[1]!)
  expect(links.length).toBeGreaterThanOrEqual(6)
  for (const link of links.filter((l) => !l.endsWith('/mcp'))) expect([link, (await fetch(link)).status]).toEqual([link, 200])
})
