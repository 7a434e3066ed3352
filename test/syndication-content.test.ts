// Free entries in the public feeds with their content (issue 38, item 6): Markdown rendered and HTML sanitized as the
// pages do (no script, no event handler, no javascript: link, no iframe), plain text escaped into paragraphs, JSON
// in a <pre>, a long text cut with a link to the rest; free images as enclosures (and JSON Feed's `image`) that
// fetch; no filler for an entry without a description; and not one word of a paid entry's content in any format.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { checkJsonFeed, elements, itemOf, validXml, xmlText } from './helpers/feed-documents.ts'

const MARKDOWN = [
  '# Field notes',
  'Some *emphasis* and a [safe link](https://example.com/safe).',
  '<script>alert("md-script")</script>',
  '[bad link](javascript:alert(1)) and <a href="javascript:alert(2)" onclick="evil()">raw link</a>',
  '<iframe src="https://evil.example/frame"></iframe>',
].join('\n\n')
const HTML =
  '<h2>Hello there</h2><p onclick="evil()">A <strong>strong</strong> word<img src="x" onerror="alert(3)">' +
  '<a href="javascript:alert(4)">j</a><a href="https://example.com/ok">ok</a></p>' +
  '<iframe src="https://evil.example/frame"></iframe><script>alert("html-script")</script><style>p{}</style>'
const TEXT = 'Line one & <b>two</b>\nstill one\n\nSecond paragraph'
const JSON_BODY = '{"a":1,"list":[1,2]}'
// Over the feed's share of a free text: its start is carried, its end is not.
const LONG = `Opening words. ${'lorem ipsum '.repeat(12_000)} closingmarkerword`
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(700, 9)])
const SECRET = 'quokkasecretword'

let server: TestServer
let owner: Wallet
let feedId: string
const e: Record<'md' | 'html' | 'text' | 'json' | 'long' | 'image' | 'bare' | 'paidText' | 'paidMd' | 'paidImage', { id: string }> =
  {} as never

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner, { name: 'Notebook' })).id
  const add = (content: string | Uint8Array, mime_type: string, more: Record<string, unknown> = {}) =>
    createEntry(server.url, owner, feedId, { content_base64: b64(content), mime_type, description: 'Described', ...more })
  const paid = { is_free: false, price: { amount: '10000', currency: 'USDC' } }
  e.md = await add(MARKDOWN, 'text/markdown', { title: 'Markdown' })
  e.html = await add(HTML, 'text/html', { title: 'Page' })
  e.text = await add(TEXT, 'text/plain; charset=utf-8', { title: 'Plain' })
  e.json = await add(JSON_BODY, 'application/json', { title: 'Data' })
  e.long = await add(LONG, 'text/plain', { title: 'Long' })
  e.image = await add(PNG, 'image/png', { title: 'Picture' })
  e.bare = await add(PNG, 'image/png', { title: 'No words', description: undefined })
  e.paidText = await add(`The paid text: ${SECRET}.`, 'text/plain', { title: 'Paid essay', ...paid })
  e.paidMd = await add(`# ${SECRET}`, 'text/markdown', { title: 'Paid notes', description: undefined, ...paid })
  e.paidImage = await add(PNG, 'image/png', { title: 'Paid picture', ...paid })
})
afterAll(() => server.dispose())

const read = async (format: string) => {
  const answer = await fetch(`${server.url}/v1/feeds/${feedId}/${format}`)
  expect(answer.status).toBe(200)
  return answer.text()
}
const bytesOf = (id: string) => `${server.url}/v1/feeds/${feedId}/entries/${id}/content`
const pageOf = (id: string) => `${server.url}/feeds/${feedId}/entries/${id}`

/** What must hold of the HTML each format carries for the free text entries. */
function checkBodies(body: (id: string) => string) {
  const md = body(e.md.id)
  expect(md).toContain('<h1>Field notes</h1>')
  expect(md).toContain('<em>emphasis</em>')
  expect(md).toContain('<a href="https://example.com/safe" rel="nofollow noopener noreferrer ugc">safe link</a>')
  expect(md).toContain('bad link')
  const html = body(e.html.id)
  expect(html).toContain('<h2>Hello there</h2>')
  expect(html).toContain('<strong>strong</strong>')
  expect(html).toContain('href="https://example.com/ok"')
  for (const shown of [md, html]) {
    for (const banned of ['<script', 'script"', 'javascript:', 'onclick', 'onerror', '<iframe', '<img', '<style', 'alert(']) {
      expect(shown).not.toContain(banned)
    }
  }
  expect(body(e.text.id)).toBe('<p>Line one &amp; &lt;b&gt;two&lt;/b&gt;<br>still one</p><p>Second paragraph</p>')
  expect(body(e.json.id)).toBe('<pre>{\n  &quot;a&quot;: 1,\n  &quot;list&quot;: [\n    1,\n    2\n  ]\n}</pre>')
  const long = body(e.long.id)
  expect(long.startsWith('<p>Opening words.')).toBe(true)
  expect(long).not.toContain('closingmarkerword')
  expect(long.length).toBeLessThan(40_000)
  expect(long).toContain(`<a href="${pageOf(e.long.id)}">`)
}

describe('free entries carry their content; paid ones never', () => {
  test('RSS: content:encoded holds the sanitized HTML; images are enclosures; no filler; nothing paid', async () => {
    const xml = await read('feed.xml')
    expect(await validXml(xml, 'rss2.rng')).toEqual([])
    expect(xml).toContain('xmlns:content="http://purl.org/rss/1.0/modules/content/"')
    const encoded = (id: string) => {
      const found = elements(itemOf(xml, 'item', id), 'content:encoded')
      expect(found).toHaveLength(1)
      return xmlText(found[0]!)
    }
    checkBodies(encoded)
    expect(elements(itemOf(xml, 'item', e.image.id), 'enclosure')).toEqual([
      `<enclosure url="${bytesOf(e.image.id)}" length="${PNG.length}" type="image/png"/>`,
    ])
    const bare = itemOf(xml, 'item', e.bare.id)
    expect(elements(bare, 'description')).toEqual([])
    expect(bare).not.toContain('Image entry')
    for (const id of [e.paidText.id, e.paidMd.id, e.paidImage.id]) {
      expect(elements(itemOf(xml, 'item', id), 'enclosure')).toEqual([])
      expect(elements(itemOf(xml, 'item', id), 'content:encoded')).toEqual([])
    }
    expect(xml).not.toContain(SECRET)
  })

  test('Atom: <content type="html"> holds the same; images are enclosure links; no filler; nothing paid', async () => {
    const xml = await read('feed.atom')
    expect(await validXml(xml, 'atom.rng')).toEqual([])
    const content = (id: string) => {
      const found = elements(itemOf(xml, 'entry', id), 'content')
      expect(found).toHaveLength(1)
      expect(found[0]).toStartWith('<content type="html">')
      return xmlText(found[0]!)
    }
    checkBodies(content)
    expect(itemOf(xml, 'entry', e.image.id)).toContain(
      `<link rel="enclosure" type="image/png" length="${PNG.length}" href="${bytesOf(e.image.id)}"/>`,
    )
    const bare = itemOf(xml, 'entry', e.bare.id)
    expect(elements(bare, 'summary')).toEqual([])
    expect(bare).not.toContain('Image entry')
    for (const id of [e.paidText.id, e.paidMd.id, e.paidImage.id]) {
      expect(itemOf(xml, 'entry', id)).not.toContain('rel="enclosure"')
      expect(elements(itemOf(xml, 'entry', id), 'content')).toEqual([])
    }
    expect(xml).not.toContain(SECRET)
  })

  test('JSON Feed: content_html (content_text for plain text); image and attachments; title where content is required', async () => {
    const text = await read('feed.json')
    expect(text).not.toContain(SECRET)
    const doc = JSON.parse(text)
    expect(checkJsonFeed(doc), JSON.stringify(checkJsonFeed.errors)).toBe(true)
    const item = (id: string) => doc.items.find((i: { id: string }) => i.id === id)
    checkBodies((id) => item(id).content_html)
    expect(item(e.text.id)).toMatchObject({ content_text: TEXT, summary: 'Described' })
    expect(item(e.md.id).content_text).toBeUndefined()
    expect(item(e.long.id).content_text).toStartWith('Opening words.')
    expect(item(e.long.id).content_text).not.toContain('closingmarkerword')
    expect(item(e.image.id)).toMatchObject({
      image: bytesOf(e.image.id),
      attachments: [{ url: bytesOf(e.image.id), mime_type: 'image/png', size_in_bytes: PNG.length }],
    })
    // JSON Feed requires content_html or content_text: an entry with no description has its title, no filler.
    expect(item(e.bare.id).content_text).toBe('No words')
    expect(item(e.bare.id).summary).toBeUndefined()
    for (const id of [e.paidText.id, e.paidMd.id, e.paidImage.id]) {
      expect(item(id).content_html).toBeUndefined()
      expect(item(id).image).toBeUndefined()
      expect(item(id).attachments).toBeUndefined()
    }
  })

  test("a free image's enclosure fetches, whole and by Range; a paid one's bytes are not handed out", async () => {
    const whole = await fetch(bytesOf(e.image.id))
    expect([whole.status, whole.headers.get('content-type')]).toEqual([200, 'image/png'])
    expect(Buffer.from(await whole.arrayBuffer()).equals(PNG)).toBe(true)
    const part = await fetch(bytesOf(e.image.id), { headers: { range: 'bytes=0-7' } })
    expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 0-7/${PNG.length}`])
    expect((await fetch(bytesOf(e.paidImage.id))).status).toBe(402)
  })
})
