// A feed in every reader: RSS 2.0, Atom 1.0 and JSON Feed 1.1, each checked by its schema (RELAX NG in
// test/schemas/, run by libxml2 compiled to wasm; JSON Feed 1.1's JSON Schema from the jsonfeed-schema package, run by
// Ajv). Free audio and video are enclosures with length and type; paid entries carry their price and a link to the
// paywall, never their content; readers that have the current version get 304.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { checkJsonFeed, elements, validXml, xmlText } from './helpers/feed-documents.ts'

const AUDIO = Buffer.alloc(3000, 7) // the bytes do not matter to a feed: their length and type do
const HOSTILE = `<b>"bold"</b> & 'quotes' ]]> \u0001\u0008 done`

let server: TestServer
let owner: Wallet
let feed: any
let audio: any
let video: any
let text: any
let paid: any

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  expect(
    (
      await call(server.url, 'PATCH', `/v1/wallets/${(await createFeed(server.url, owner, { name: 'other' })).owner_id}`, {
        wallet: owner,
        body: { username: 'hills' },
      })
    ).status,
  ).toBe(200)
  feed = await createFeed(server.url, owner, {
    name: `Field recordings ${HOSTILE}`,
    description: `Sounds ${HOSTILE}`,
    tags: ['audio', HOSTILE],
  })
  text = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('notes'),
    mime_type: 'text/plain',
    title: `Notes ${HOSTILE}`,
    description: HOSTILE,
    tags: [HOSTILE],
  })
  audio = await createEntry(server.url, owner, feed.id, {
    content_base64: b64(AUDIO),
    mime_type: 'audio/mpeg',
    title: 'Dawn chorus',
    description: 'Episode 1',
  })
  video = await createEntry(server.url, owner, feed.id, {
    content_base64: b64(AUDIO.subarray(0, 1234)),
    mime_type: 'video/mp4; codecs="avc1.42E01E"',
    title: 'Creek',
  })
  paid = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('the paid episode'),
    mime_type: 'audio/mpeg',
    title: 'Bonus',
    description: 'Members only',
    is_free: false,
    price: { amount: '250000', currency: 'USDC' },
  })
})
afterAll(() => server.dispose())

const url = (format: string) => `${server.url}/v1/feeds/${feed.id}/${format}`
const get = (format: string, headers: Record<string, string> = {}) => fetch(url(format), { headers })
const entryPage = (e: { id: string }) => `${server.url}/feeds/${feed.id}/entries/${e.id}`
const bytesOf = (e: { id: string }) => `${server.url}/v1/feeds/${feed.id}/entries/${e.id}/content`

describe('RSS 2.0 at feed.xml', () => {
  test(
    'valid by the RSS 2.0 schema; free audio and video are enclosures with their length and type; ' +
      'the paid entry has its price and the paywall link, no enclosure',
    async () => {
      const answer = await get('feed.xml')
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8')
      const xml = await answer.text()
      expect(await validXml(xml, 'rss2.rng')).toEqual([])
      const items = elements(xml, 'item')
      expect(items).toHaveLength(4)
      const item = (e: { id: string }) => items.find((i) => i.includes(`urn:uuid:${e.id}`))!
      expect(elements(item(audio), 'enclosure')).toEqual([`<enclosure url="${bytesOf(audio)}" length="3000" type="audio/mpeg"/>`])
      expect(elements(item(video), 'enclosure')).toEqual([`<enclosure url="${bytesOf(video)}" length="1234" type="video/mp4"/>`])
      expect(elements(item(text), 'enclosure')).toEqual([])
      const bonus = item(paid)
      expect(elements(bonus, 'enclosure')).toEqual([])
      expect(bonus).toContain('<title>Bonus (0.25 USDC)</title>')
      expect(bonus).toContain(`Buy it at ${entryPage(paid)}`)
      expect(bonus).not.toContain('/content')
      expect(xml).not.toContain('the paid episode')
      // The hostile text is there, escaped, with the characters XML cannot hold dropped.
      expect(xml).toContain('&lt;b&gt;&quot;bold&quot;&lt;/b&gt; &amp; &#39;quotes&#39; ]]&gt;  done')
      expect(xml).not.toContain('\u0001')
    },
  )

  test("RSS descriptions are HTML by convention: the creator's text reaches the reader as text, no markup of theirs is live", async () => {
    const xml = await (await get('feed.xml')).text()
    const channelDescription = elements(xml.slice(0, xml.indexOf('<item>')), 'description')
    const itemDescription = elements(elements(xml, 'item').find((i) => i.includes(`urn:uuid:${text.id}`))!, 'description')
    const shown = `<b>"bold"</b> & 'quotes' ]]>  done`
    for (const [element] of [channelDescription, itemDescription]) {
      const asHtml = xmlText(element!)
      expect(asHtml).not.toContain('<b>')
      // Read as HTML, it says exactly what the creator wrote.
      expect(xmlText(`<x>${asHtml}</x>`)).toContain(shown)
    }
    // A paid entry's text keeps its paragraphs as HTML line breaks, the only markup in a description.
    const bonus = xmlText(elements(elements(xml, 'item').find((i) => i.includes(`urn:uuid:${paid.id}`))!, 'description')[0]!)
    expect(bonus).toBe(`Members only<br><br>Paid entry: 0.25 USDC on base-sepolia. Buy it at ${entryPage(paid)}`)
  })
})

describe('Atom 1.0 at feed.atom', () => {
  test('valid by the Atom schema and by the RFC rules the grammar cannot say; enclosures as links', async () => {
    const answer = await get('feed.atom')
    expect(answer.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8')
    const xml = await answer.text()
    expect(await validXml(xml, 'atom.rng')).toEqual([])
    const entries = elements(xml, 'entry')
    expect(entries).toHaveLength(4)
    // RFC 4287 §4.1.1: the feed has an author (so every entry does); §4.1.2: an entry without content has an alternate link.
    expect(elements(xml.slice(0, xml.indexOf('<entry>')), 'author')).toEqual([
      `<author><name>hills</name><uri>${server.url}/creators/${owner.address}</uri></author>`,
    ])
    for (const entry of entries) expect(entry).toContain('<link rel="alternate" type="text/html"')
    const ids = entries.map((e) => /<id>([^<]+)<\/id>/.exec(e)![1])
    expect(new Set(ids).size).toBe(4)
    const of = (e: { id: string }) => entries.find((x) => x.includes(`urn:uuid:${e.id}`))!
    expect(of(audio)).toContain(`<link rel="enclosure" type="audio/mpeg" length="3000" href="${bytesOf(audio)}"/>`)
    expect(of(paid)).not.toContain('rel="enclosure"')
    expect(of(paid)).toContain('Paid entry: 0.25 USDC on base-sepolia.')
  })
})

describe('JSON Feed 1.1 at feed.json', () => {
  test('valid by the JSON Feed 1.1 schema; attachments for free audio and video; the paid entry priced, without content', async () => {
    const answer = await get('feed.json')
    expect(answer.headers.get('content-type')).toBe('application/feed+json; charset=utf-8')
    const doc = await answer.json()
    expect(checkJsonFeed(doc), JSON.stringify(checkJsonFeed.errors)).toBe(true)
    expect(doc.version).toBe('https://jsonfeed.org/version/1.1')
    expect(doc).toMatchObject({ home_page_url: `${server.url}/feeds/${feed.id}`, feed_url: url('feed.json'), authors: [{ name: 'hills' }] })
    const item = (e: { id: string }) => doc.items.find((i: any) => i.id === e.id)
    expect(item(audio).attachments).toEqual([{ url: bytesOf(audio), mime_type: 'audio/mpeg', size_in_bytes: 3000 }])
    expect(item(text).attachments).toBeUndefined()
    expect(item(paid).attachments).toBeUndefined()
    expect(item(paid)._trellis).toEqual({
      is_free: false,
      price: '250000',
      asset: 'USDC',
      network: 'base-sepolia',
      mime_type: 'audio/mpeg',
    })
    expect(item(paid).url).toBe(entryPage(paid))
    expect(JSON.stringify(doc)).not.toContain('the paid episode')
  })
})

describe('conditional GET and the rest', () => {
  test('ETag and Last-Modified: 304 to a reader that has this version, 200 again after a change', async () => {
    for (const format of ['feed.xml', 'feed.atom', 'feed.json']) {
      const first = await get(format)
      const etag = first.headers.get('etag')!
      const lastModified = first.headers.get('last-modified')!
      expect(etag).toMatch(/^"\w+"$/)
      expect((await get(format, { 'if-none-match': etag })).status).toBe(304)
      expect((await get(format, { 'if-modified-since': lastModified })).status).toBe(304)
      expect((await get(format, { 'if-none-match': '"other"' })).status).toBe(200)
      expect((await get(format, { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() })).status).toBe(200)
    }
    const before = (await get('feed.json')).headers.get('etag')!
    await Bun.sleep(1000) // Last-Modified has whole seconds
    expect(
      (await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${text.id}`, { wallet: owner, body: { title: 'Renamed notes' } }))
        .status,
    ).toBe(200)
    const after = await get('feed.json', { 'if-none-match': before })
    expect(after.status).toBe(200)
    expect(JSON.stringify(await after.json())).toContain('Renamed notes')
  })

  test('a deleted or unknown feed is 404, a malformed id 400', async () => {
    const wallet = newWallet()
    const gone = await createFeed(server.url, wallet, { name: 'gone' })
    expect((await get('feed.xml')).status).toBe(200)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${gone.id}`, { wallet })).status).toBe(204)
    for (const format of ['feed.xml', 'feed.atom', 'feed.json']) {
      expectError(await call(server.url, 'GET', `/v1/feeds/${gone.id}/${format}`), 404, 'FEED_NOT_FOUND')
      expectError(await call(server.url, 'GET', `/v1/feeds/${crypto.randomUUID()}/${format}`), 404, 'FEED_NOT_FOUND')
      expectError(await call(server.url, 'GET', `/v1/feeds/nope/${format}`), 400, 'INVALID_PARAMETER')
    }
  })
})
