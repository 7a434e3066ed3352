// A pass holder's private feed URL (issue 37) on a real chain: a holder who bought a pass asks for it signed and reads
// RSS 2.0, Atom 1.0 and JSON Feed 1.1 (each valid by its schema, as test/syndication.test.ts checks the public ones)
// with the paid entries' full text inline and the media enclosed at URLs that play with Range and no signature; the
// same URL every time it is asked for; a stranger gets none and cannot revoke it; revoked, it is gone and the next one
// differs; the pass ending stops it and buying again opens it again; a takedown answers 451; reads pay nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { checkJsonFeed, elements, itemOf, validXml, xmlText } from './helpers/feed-documents.ts'

const ADMIN = { 'admin-api-key': 'pass-feeds-admin-key' }
const PASS_PRICE = 50_000n
const PRICE = { amount: '10000', currency: 'USDC' }
const TEXT = 'The whole paid essay.\nLine two & <b>markup</b> stays text.'
const NOTES = '# Heading\n\nMarkdown body'
const AUDIO = Uint8Array.from({ length: 5000 }, (_, i) => i % 251)

let chain: TestChain
let server: TestServer
let creator: Wallet
let feedId: string
const paid: Record<'text' | 'notes' | 'audio', { id: string }> = {} as never
let free: { id: string }

const path = `/v1/feeds/{feed}/pass/feed-url`
const feedUrlOf = (feed: string) => path.replace('{feed}', feed)
const ask = (wallet: Wallet | undefined, feed = feedId) => call(server.url, 'POST', feedUrlOf(feed), { wallet })
const revoke = (wallet: Wallet, feed = feedId) => call(server.url, 'DELETE', feedUrlOf(feed), { wallet })
const ledgerRows = async () =>
  (await call(server.url, 'GET', `/v1/transactions?feed_id=${feedId}&page_size=1`)).body.pagination.total_count as number
const enclosureOf = (rssUrl: string, entryId: string) => rssUrl.replace(/feed\.xml$/, `entries/${entryId}/content`)

/** Buys the feed's pass for a new funded wallet (or `buyer`) with a v1 payment header. */
async function buyPass(buyer?: Awaited<ReturnType<TestChain['newFundedBuyer']>>) {
  const wallet = buyer ?? (await chain.newFundedBuyer(1_000_000n))
  const header = encodePaymentHeader(await v1Payment(wallet, { to: creator.address, value: PASS_PRICE }))
  const bought = await fetch(`${server.url}/v1/feeds/${feedId}/pass/purchases`, { method: 'POST', headers: { 'x-payment': header } })
  expect(bought.status).toBe(201)
  return wallet
}

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_TEST_CLOCK_FILE: testClockFile(), TRELLIS_ADMIN_KEY: ADMIN['admin-api-key'] })
  creator = newWallet()
  feedId = (await createFeed(server.url, creator, { name: 'Members' })).id
  const add = (content: string | Uint8Array, mime_type: string, more: Record<string, unknown> = {}) =>
    createEntry(server.url, creator, feedId, { content_base64: b64(content), mime_type, is_free: false, price: PRICE, ...more })
  free = await add('free words', 'text/plain', { is_free: true, price: undefined })
  paid.text = await add(TEXT, 'text/plain', { title: 'Essay', description: 'An essay' })
  paid.notes = await add(NOTES, 'text/markdown', { title: 'Notes' })
  paid.audio = await add(AUDIO, 'audio/mpeg', { title: 'Episode 1' })
  const terms = { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: 3600 }
  expect((await call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, { wallet: creator, body: terms })).status).toBe(200)
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

describe("a pass holder's private feed", () => {
  test('a holder gets absolute URLs, the same ones when asking again; no pass, no URL', async () => {
    const holder = await buyPass()
    const first = await ask(holder as never)
    expect(first.status).toBe(200)
    const token = /\/v1\/pass-feeds\/([\w-]+)\/feed\.xml$/.exec(first.body.url)![1]
    const base = `${server.url}/v1/pass-feeds/${token}`
    expect(first.body).toEqual({ url: `${base}/feed.xml`, atom_url: `${base}/feed.atom`, json_url: `${base}/feed.json` })
    expect((await ask(holder as never)).body).toEqual(first.body)
    // A Host of the client's choosing names nothing: the URL is the server's public one.
    const elsewhere = await call(server.url, 'POST', feedUrlOf(feedId), { wallet: holder as never, headers: { host: 'evil.example' } })
    expect(elsewhere.body).toEqual(first.body)

    expectError(await ask(newWallet()), 403, 'PASS_REQUIRED')
    expectError(await ask(undefined), 401, 'AUTH_REQUIRED')
    expectError(await ask(holder as never, crypto.randomUUID()), 404, 'FEED_NOT_FOUND')
    // The owner reads everything without a pass, through a URL too.
    const owned = await ask(creator)
    expect(owned.status).toBe(200)
    expect(owned.body.url).not.toBe(first.body.url)
  })

  test('RSS, Atom and JSON Feed: valid, every entry in full (text inline, audio enclosed), private and unindexed', async () => {
    const holder = await buyPass()
    const rows = await ledgerRows()
    const balance = await chain.balanceOf(holder.address)
    const urls = (await ask(holder as never)).body
    const enclosure = (id: string) => enclosureOf(urls.url, id)

    const rss = await fetch(urls.url)
    expect(rss.status).toBe(200)
    expect(rss.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8')
    expect(rss.headers.get('cache-control')).toBe('private, no-store')
    expect(rss.headers.get('x-robots-tag')).toContain('noindex')
    const xml = await rss.text()
    expect(await validXml(xml, 'rss2.rng')).toEqual([])
    expect(elements(xml, 'item')).toHaveLength(4)
    expect(xml).toContain(`<atom:link href="${urls.url}" rel="self"`)
    expect(xml).toContain('<itunes:block>Yes</itunes:block>')
    const essay = itemOf(xml, 'item', paid.text.id)
    expect(essay).toContain('<title>Essay</title>') // no price: the reader has it
    // content:encoded is HTML by convention: the text escaped as HTML (line breaks as <br>), then as XML.
    const asHtml = xmlText(elements(essay, 'content:encoded')[0]!)
    expect(xmlText(`<x>${asHtml.replaceAll('<br>', '\n')}</x>`)).toBe(TEXT)
    expect(elements(essay, 'enclosure')).toEqual([])
    expect(xmlText(elements(itemOf(xml, 'item', paid.notes.id), 'content:encoded')[0]!)).toContain('# Heading')
    expect(elements(itemOf(xml, 'item', paid.audio.id), 'enclosure')).toEqual([
      `<enclosure url="${enclosure(paid.audio.id)}" length="5000" type="audio/mpeg"/>`,
    ])
    expect(xmlText(elements(itemOf(xml, 'item', free.id), 'content:encoded')[0]!)).toBe('free words')

    const atom = await fetch(urls.atom_url)
    expect([atom.status, atom.headers.get('content-type'), atom.headers.get('cache-control')]).toEqual([
      200,
      'application/atom+xml; charset=utf-8',
      'private, no-store',
    ])
    const atomXml = await atom.text()
    expect(await validXml(atomXml, 'atom.rng')).toEqual([])
    expect(xmlText(elements(itemOf(atomXml, 'entry', paid.text.id), 'content')[0]!)).toBe(TEXT)
    expect(itemOf(atomXml, 'entry', paid.audio.id)).toContain(
      `<link rel="enclosure" type="audio/mpeg" length="5000" href="${enclosure(paid.audio.id)}"/>`,
    )

    const json = await fetch(urls.json_url)
    expect([json.status, json.headers.get('cache-control')]).toEqual([200, 'private, no-store'])
    const doc = (await json.json()) as any
    expect(checkJsonFeed(doc), JSON.stringify(checkJsonFeed.errors)).toBe(true)
    expect(doc.feed_url).toBe(urls.json_url)
    const item = (id: string) => doc.items.find((i: { id: string }) => i.id === id)
    expect(item(paid.text.id)).toMatchObject({ title: 'Essay', content_text: TEXT, summary: 'An essay' })
    expect(item(paid.notes.id).content_text).toBe(NOTES)
    expect(item(paid.audio.id).attachments).toEqual([{ url: enclosure(paid.audio.id), mime_type: 'audio/mpeg', size_in_bytes: 5000 }])
    expect(item(paid.audio.id)._trellis).toMatchObject({ is_free: false, price: PRICE.amount })

    // The enclosure plays as a podcast app plays it: no headers but Range.
    const part = await fetch(enclosure(paid.audio.id), { headers: { range: 'bytes=100-1099' } })
    expect([part.status, part.headers.get('content-range'), part.headers.get('cache-control')]).toEqual([
      206,
      'bytes 100-1099/5000',
      'private, no-store',
    ])
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(AUDIO.subarray(100, 1100))
    const whole = await fetch(enclosure(paid.audio.id))
    expect([whole.status, whole.headers.get('content-type'), whole.headers.get('x-robots-tag')]).toEqual([
      200,
      'audio/mpeg',
      'noindex, nofollow, noarchive',
    ])
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(AUDIO)
    expect((await fetch(enclosure(paid.text.id))).status).toBe(200)
    expectError(await call(server.url, 'GET', new URL(enclosure(crypto.randomUUID())).pathname), 404, 'ENTRY_NOT_FOUND')
    // A reader that has this version is told so.
    const etag = (await fetch(urls.url)).headers.get('etag')!
    expect((await fetch(urls.url, { headers: { 'if-none-match': etag } })).status).toBe(304)

    // Nothing of it was a sale: no ledger row, no payment.
    expect(await ledgerRows()).toBe(rows)
    expect(await chain.balanceOf(holder.address)).toBe(balance)
  })

  test("a forged token opens nothing; a stranger cannot revoke the holder's URL; revoked, it is gone and the next differs", async () => {
    const holder = await buyPass()
    const { url } = (await ask(holder as never)).body
    const forged = url.replace(/\/pass-feeds\/(.)/, (_: string, c: string) => `/pass-feeds/${c === 'A' ? 'B' : 'A'}`)
    expectError(await call(server.url, 'GET', new URL(forged).pathname), 404, 'FEED_URL_NOT_FOUND')
    expectError(await call(server.url, 'GET', '/v1/pass-feeds/nope/feed.json'), 404, 'FEED_URL_NOT_FOUND')

    expectError(await revoke(newWallet()), 404, 'FEED_URL_NOT_FOUND')
    expect((await fetch(url)).status).toBe(200)
    expect((await revoke(holder as never)).status).toBe(204)
    expectError(await revoke(holder as never), 404, 'FEED_URL_NOT_FOUND')
    for (const gone of [url, url.replace('feed.xml', 'feed.json'), enclosureOf(url, paid.audio.id)])
      expectError(await call(server.url, 'GET', new URL(gone).pathname), 410, 'FEED_URL_REVOKED')
    const next = (await ask(holder as never)).body.url
    expect(next).not.toBe(url)
    expect((await fetch(next)).status).toBe(200)
    expectError(await call(server.url, 'GET', new URL(url).pathname), 410, 'FEED_URL_REVOKED')
  })

  test('taken down, the feed answers 451 to its URL and to asking for one; reinstated, the same URL reads again', async () => {
    const feed = (await createFeed(server.url, creator, { name: 'Down for a while' })).id
    const { url } = (await ask(creator, feed)).body
    expect((await fetch(url)).status).toBe(200)
    expect((await call(server.url, 'POST', `/v1/admin/feeds/${feed}/takedown`, { headers: ADMIN, body: { reason: 'x' } })).status).toBe(201)
    expectError(await call(server.url, 'GET', new URL(url).pathname), 451, 'TAKEN_DOWN')
    expectError(await ask(creator, feed), 451, 'TAKEN_DOWN')
    expect((await call(server.url, 'POST', `/v1/admin/feeds/${feed}/reinstate`, { headers: ADMIN })).status).toBe(200)
    expect((await fetch(url)).status).toBe(200)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feed}`, { wallet: creator })).status).toBe(204)
    expectError(await call(server.url, 'GET', new URL(url).pathname), 404, 'FEED_NOT_FOUND')
  })

  test('the pass ends: the URL stops (403 PASS_EXPIRED); buying again opens the same URL again', async () => {
    const holder = await buyPass()
    const { url } = (await ask(holder as never)).body
    const audio = enclosureOf(url, paid.audio.id)
    expect((await fetch(url)).status).toBe(200)
    const rows = await ledgerRows()
    await server.moveClock(3601)
    try {
      expectError(await call(server.url, 'GET', new URL(url).pathname), 403, 'PASS_EXPIRED')
      expectError(await call(server.url, 'GET', new URL(audio).pathname), 403, 'PASS_EXPIRED')
      expect(await ledgerRows()).toBe(rows)
      await buyPass(holder)
      expect((await fetch(url)).status).toBe(200)
      expect((await fetch(audio, { headers: { range: 'bytes=0-9' } })).status).toBe(206)
    } finally {
      await server.moveClock(0)
    }
  })
})
