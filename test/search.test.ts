// GET /v1/search on a real server over HTTP (the embedded engine, or PostgreSQL on the suite's PostgreSQL pass): the words
// of feeds and entries and the text of free text entries are found, a paid entry's content never (nor in a snippet);
// taken-down, deleted and inactive items are left out; an entry made free becomes searchable by its text; hostile
// queries answer 200 or 400; pages walk every hit once; a title match ranks above a body match.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type TestChain } from '../dev/chain.ts'

const ADMIN_KEY = 'search-admin-key-0123456789abcdef0123'
const admin = { 'admin-api-key': ADMIN_KEY }

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any

/** A word no other test uses: letters only, so both engines' stemmers leave it as it is. */
const word = () => `zq${[...crypto.getRandomValues(new Uint8Array(8))].map((b) => 'bcdfghjklmnpqrstvwxz'[b % 20]).join('')}`

const search = (params: Record<string, string>) => call(server.url, 'GET', `/v1/search?${new URLSearchParams(params)}`)
const found = async (params: Record<string, string>) => {
  const reply = await search(params)
  expect(reply.status).toBe(200)
  return reply.body.data as any[]
}
const ids = (data: any[]) => data.map((hit) => (hit.type === 'entry' ? hit.entry.id : hit.feed.id))
const text = (body: string, extra: Record<string, unknown> = {}) =>
  createEntry(server.url, owner, feed.id, { content_base64: b64(body), mime_type: 'text/plain', ...extra })
const paid = (body: string, extra: Record<string, unknown> = {}) =>
  text(body, { is_free: false, price: { amount: '10000', currency: 'USDC' }, ...extra })

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_ADMIN_KEY: ADMIN_KEY })
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'Search feed', description: 'entries to find' })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

describe("a free entry's text is found, a paid entry's content never", () => {
  test('a word only in a free entry body finds it, with a snippet marking the word', async () => {
    const secret = word()
    const entry = await text(`The river was quiet. ${secret} appeared at dawn, then the mist.`, { title: 'Morning' })
    const data = await found({ q: secret })
    expect(ids(data)).toEqual([entry.id])
    expect(data[0]).toMatchObject({ type: 'entry', feed: { id: feed.id, name: 'Search feed' }, entry: { id: entry.id, title: 'Morning' } })
    expect(data[0].snippet).toContain(`«${secret}»`)
    expect(data[0].entry.content_url).toBeUndefined()
  })

  test('a word only in a paid entry content finds nothing; its title is found, and no snippet shows the content', async () => {
    const secret = word()
    const title = word()
    const entry = await paid(`Paid words: ${secret} is the answer.`, { title: `Report ${title}`, description: 'the premium one' })
    expect(await found({ q: secret })).toEqual([])
    expect(await found({ q: secret, type: 'entry' })).toEqual([])
    const byTitle = await found({ q: title })
    expect(ids(byTitle)).toEqual([entry.id])
    expect(JSON.stringify(byTitle)).not.toContain(secret)
    expect(byTitle[0].snippet).toContain(`«${title}»`)
  })

  test('Markdown, HTML (not its scripts or tags) and JSON string values are text too; other types are not read', async () => {
    const [md, html, script, json, key] = [word(), word(), word(), word(), word()]
    const markdown = await text(`# Heading\n\nSome *${md}* here.`, { mime_type: 'text/markdown' })
    const page = await text(`<p>Hello <b>${html}</b></p><script>var ${script} = 1</script>`, { mime_type: 'text/html; charset=utf-8' })
    const data = await text(JSON.stringify({ [key]: 1, note: `a ${json} value` }), { mime_type: 'application/json' })
    expect(ids(await found({ q: md }))).toEqual([markdown.id])
    expect(ids(await found({ q: html }))).toEqual([page.id])
    expect(await found({ q: script })).toEqual([])
    expect(ids(await found({ q: json }))).toEqual([data.id])
    expect(await found({ q: key })).toEqual([])
    const svg = word()
    await text(`<svg xmlns="http://www.w3.org/2000/svg"><text>${svg}</text></svg>`, { mime_type: 'image/svg+xml' })
    expect(await found({ q: svg })).toEqual([])
  })

  test('an entry made free by PATCH becomes searchable by its content', async () => {
    const secret = word()
    const entry = await paid(`Early access: ${secret} for subscribers.`)
    expect(await found({ q: secret })).toEqual([])
    const made = await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${entry.id}`, { wallet: owner, body: { is_free: true } })
    expect(made.status).toBe(200)
    const data = await found({ q: secret })
    expect(ids(data)).toEqual([entry.id])
    expect(data[0].entry.is_free).toBe(true)
  })
})

describe('words of feeds and entries', () => {
  test("an entry's title, description and tags; a feed's name, description and tags; type narrows, PATCH follows", async () => {
    const [t, d, g, n, fd, fg] = [word(), word(), word(), word(), word(), word()]
    const entry = await text('plain', { title: `On ${t}`, description: `About ${d}`, tags: [g] })
    const other = await createFeed(server.url, owner, { name: `Feed ${n}`, description: `Feeds ${fd}`, tags: [fg] })
    for (const q of [t, d, g]) expect(ids(await found({ q })), q).toEqual([entry.id])
    for (const q of [n, fd, fg]) expect(ids(await found({ q })), q).toEqual([other.id])
    expect((await found({ q: n }))[0]).toMatchObject({ type: 'feed', entry: null, feed: { id: other.id, name: `Feed ${n}` } })
    expect(await found({ q: n, type: 'entry' })).toEqual([])
    expect(await found({ q: t, type: 'feed' })).toEqual([])
    // Every word must match.
    expect(await found({ q: `${t} ${d}` })).toHaveLength(1)
    expect(await found({ q: `${t} ${word()}` })).toEqual([])

    const renamed = word()
    await call(server.url, 'PATCH', `/v1/feeds/${other.id}`, { wallet: owner, body: { name: `Feed ${renamed}` } })
    await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${entry.id}`, { wallet: owner, body: { title: 'Untitled', tags: [] } })
    expect(ids(await found({ q: renamed }))).toEqual([other.id])
    expect(await found({ q: n })).toEqual([])
    expect(await found({ q: t })).toEqual([])
    expect(await found({ q: g })).toEqual([])
    expect(ids(await found({ q: d }))).toEqual([entry.id])
  })

  test('category narrows to feeds of it and the entries of its feeds, by id or name', async () => {
    const categories = (await call(server.url, 'GET', '/v1/categories?page_size=100')).body.data
    const [one, two] = categories
    const shared = word()
    const a = await createFeed(server.url, owner, { name: `A ${shared}`, category_id: one.id })
    const b = await createFeed(server.url, owner, { name: `B ${shared}`, category_id: two.id })
    const inB = await createEntry(server.url, owner, b.id, { title: `In ${shared}` })
    expect(new Set(ids(await found({ q: shared })))).toEqual(new Set([a.id, b.id, inB.id]))
    expect(ids(await found({ q: shared, category: one.id }))).toEqual([a.id])
    expect(new Set(ids(await found({ q: shared, category: two.name })))).toEqual(new Set([b.id, inB.id]))
    expect(await found({ q: shared, category: 'no such category' })).toEqual([])
  })
})

describe('what is not shown', () => {
  test('a taken-down feed or entry, and a deleted one, is left out; reinstated or restored, it is back', async () => {
    const shared = word()
    const other = await createFeed(server.url, owner, { name: `Gone ${shared}` })
    const inOther = await createEntry(server.url, owner, other.id, { title: `Gone ${shared}` })
    const entry = await text(`body ${shared}`)
    const all = new Set([other.id, inOther.id, entry.id])
    expect(new Set(ids(await found({ q: shared })))).toEqual(all)

    const down = async (kind: string, id: string) =>
      (await call(server.url, 'POST', `/v1/admin/${kind}/${id}/takedown`, { headers: admin, body: { reason: 'test' } })).status
    const up = async (kind: string, id: string) =>
      (await call(server.url, 'POST', `/v1/admin/${kind}/${id}/reinstate`, { headers: admin })).status
    expect(await down('entries', entry.id)).toBe(201)
    expect(new Set(ids(await found({ q: shared })))).toEqual(new Set([other.id, inOther.id]))
    expect(await down('feeds', other.id)).toBe(201)
    expect(await found({ q: shared })).toEqual([])
    expect(await up('feeds', other.id)).toBe(200)
    expect(await up('entries', entry.id)).toBe(200)
    expect(new Set(ids(await found({ q: shared })))).toEqual(all)

    expect((await call(server.url, 'DELETE', `/v1/feeds/${feed.id}/entries/${entry.id}`, { wallet: owner })).status).toBe(204)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${other.id}`, { wallet: owner })).status).toBe(204)
    expect(await found({ q: shared })).toEqual([])
    expect((await call(server.url, 'PATCH', `/v1/feeds/${other.id}`, { wallet: owner, body: { is_active: true } })).status).toBe(200)
    expect(new Set(ids(await found({ q: shared })))).toEqual(new Set([other.id, inOther.id]))
  })
})

describe('queries and pages', () => {
  test('hostile q answers 200 or 400 with the field named, never 500', async () => {
    const hostile = [
      '"',
      '*',
      'NEAR(',
      'OR',
      'AND',
      'NOT',
      '"a" OR "b"',
      'a*',
      '-',
      "'",
      '\\',
      '%',
      '(',
      ')',
      'a:b',
      '^x',
      '{x}',
      'NEAR(a b, 2)',
    ]
    for (const q of [...hostile, 'ümlaut', '日本語', '😀', 'a'.repeat(200), 'x '.repeat(100)]) {
      const reply = await search({ q })
      expect([200, 400], q).toContain(reply.status)
      if (reply.status === 400) expect(reply.body.code, q).toBe('INVALID_PARAMETER')
    }
    for (const q of ['', '   ', '"*"', 'a'.repeat(201), 'nul\u0000']) {
      const reply = await search({ q })
      expectError(reply, 400, 'INVALID_PARAMETER')
      expect(reply.text, JSON.stringify(q)).toMatch(/\bq\b/)
    }
    expectError(await call(server.url, 'GET', '/v1/search'), 400, 'INVALID_PARAMETER')
    expectError(await search({ q: 'x', type: 'wallet' }), 400, 'INVALID_PARAMETER')
    expectError(await search({ q: 'x', page_size: '0' }), 400, 'INVALID_PARAMETER')
  })

  test('pages walk every hit once, in one order; a token of another query is refused', async () => {
    const shared = word()
    const made = []
    for (let i = 0; i < 7; i++) made.push((await text(`${'filler '.repeat(i)}${shared}`, { title: `Item ${i}` })).id)
    const seen: string[] = []
    let token: string | null = null
    do {
      const reply: any = await search({ q: shared, page_size: '2', ...(token ? { page_token: token } : {}) })
      expect(reply.status).toBe(200)
      expect(reply.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...ids(reply.body.data))
      token = reply.body.pagination.next_page_token
      expect(reply.body.pagination.has_more).toBe(token !== null)
    } while (token)
    expect(seen).toHaveLength(7)
    expect(new Set(seen)).toEqual(new Set(made))
    expect(seen).toEqual(ids(await found({ q: shared, page_size: '100' })))
    const first = await search({ q: shared, page_size: '2' })
    expectError(await search({ q: word(), page_token: first.body.pagination.next_page_token }), 422, 'INVALID_PAGE_TOKEN')
  })

  test("a word in a title ranks above the same word in a body, whatever the body's length", async () => {
    const shared = word()
    const inBody = await text(`${shared} ${shared} ${shared} in the text, three times`)
    const inTitle = await text('nothing here', { title: `The ${shared}` })
    expect(ids(await found({ q: shared }))).toEqual([inTitle.id, inBody.id])
  })
})
