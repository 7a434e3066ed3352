// Each 402 declares its resource for the bazaar (x402's discovery extension): how to call it and what it answers,
// validated here with @x402/extensions' own checks and @x402/core's schema of the 402; an x402 v2 client pays it with
// the declaration echoed, and a facilitator reading that payment catalogues the resource under its route.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http'
import { PaymentRequiredV2Schema } from '@x402/core/schemas'
import type { PaymentPayload } from '@x402/core/types'
import { extractDiscoveryInfo, validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'
import { payingFetch } from './helpers/x402-buyer.ts'

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any
let entry: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Bazaar feed', tags: ['data', 'weather'] })
  entry = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('# Forecast'),
    mime_type: 'text/markdown',
    title: 'Tomorrow',
    tags: ['forecast'],
    is_free: false,
    price: { amount: '20000', currency: 'USDC' },
  })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

/** The v2 challenge of `path`, checked against @x402/core's schema, and its bazaar declaration checked as facilitators do. */
async function declared(path: string, method = 'GET') {
  const answer = await fetch(`${server.url}${path}`, { method })
  expect(answer.status).toBe(402)
  const challenge = decodePaymentRequiredHeader(answer.headers.get('payment-required')!)
  expect(PaymentRequiredV2Schema.safeParse(challenge).success).toBe(true)
  const bazaar = challenge.extensions!.bazaar as any
  expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true })
  expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true })
  return { challenge, bazaar }
}

test("an entry's 402 declares a GET of its route, answering its record (title, feed, media type) as JSON", async () => {
  const path = `/v1/feeds/${feed.id}/entries/${entry.id}`
  const { challenge, bazaar } = await declared(path)
  expect(challenge.resource).toEqual({
    url: `${server.url}${path}`,
    description: 'Tomorrow',
    mimeType: 'application/json',
    serviceName: 'Trellis',
    tags: ['forecast'],
  })
  expect(bazaar.routeTemplate).toBe('/v1/feeds/:feed_id/entries/:entry_id')
  expect(bazaar.info.input).toEqual({ type: 'http', method: 'GET', queryParams: {}, pathParams: { feed_id: feed.id, entry_id: entry.id } })
  expect(bazaar.schema.properties.input.properties.pathParams.required).toEqual(['feed_id', 'entry_id'])
  expect(bazaar.info.output).toMatchObject({
    type: 'json',
    example: { id: entry.id, feed_id: feed.id, title: 'Tomorrow', mime_type: 'text/markdown', is_free: false },
  })
  // The sign-in-with-x challenge is still there, beside it.
  expect(Object.keys(challenge.extensions!).sort()).toEqual(['bazaar', 'sign-in-with-x'])
})

test("the bytes' 402 declares their media type; a pass's declares a POST with a JSON body", async () => {
  const { bazaar } = await declared(`/v1/feeds/${feed.id}/entries/${entry.id}/content`)
  expect(bazaar.routeTemplate).toBe('/v1/feeds/:feed_id/entries/:entry_id/content')
  expect(bazaar.info.output).toEqual({ type: 'text/markdown' })

  const month = { price: { amount: '50000', currency: 'USDC' }, duration_s: 2_592_000 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, { wallet: owner, body: month })).status).toBe(200)
  const pass = await declared(`/v1/feeds/${feed.id}/pass/purchases`, 'POST')
  expect(pass.bazaar.routeTemplate).toBe('/v1/feeds/:feed_id/pass/purchases')
  expect(pass.bazaar.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json', body: {} })
  expect(pass.bazaar.info.output.example).toMatchObject({ feed_id: feed.id, expires_at: 1_767_225_600 + 2_592_000 })
  expect(pass.challenge.resource.tags).toEqual(['data', 'weather'])
})

test('an x402 v2 client pays with the declaration echoed; a facilitator catalogues the route from the payment', async () => {
  const buyer = await chain.newFundedBuyer(1_000_000n)
  let sent: PaymentPayload | undefined
  const watching = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init)
    const header = request.headers.get('payment-signature')
    if (header) sent = decodePaymentSignatureHeader(header)
    return fetch(request)
  }) as typeof fetch
  const pay = payingFetch(buyer, watching)
  const url = `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}`
  const bought = await pay(url)
  expect(bought.status).toBe(200)
  expect((await bought.json()).content_url).toStartWith(`${server.url}/v1/access/`)
  const catalogued = extractDiscoveryInfo(sent!, sent!.accepted)
  expect(catalogued).toMatchObject({
    resourceUrl: `${server.url}/v1/feeds/:feed_id/entries/:entry_id`,
    method: 'GET',
    serviceName: 'Trellis',
    x402Version: 2,
  })
}, 60_000)
