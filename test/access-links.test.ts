import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { setClockOffset } from '../src/lib/clock.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

// In process (app.handle): rules of the routes and the domain, not of the process or the socket.
let app: InProcessApp
let owner: Wallet
let feed: any
let paid: any

beforeAll(async () => {
  app = await startInProcess()
  owner = newWallet()
  feed = await createFeed(app, owner, { name: 'links' })
  paid = await createEntry(app, owner, feed.id, {
    content_base64: b64('members only'),
    title: 'Paid',
    is_free: false,
    price: { amount: '5000' },
  })
})
afterAll(() => app.dispose())

const linkPath = (entry = paid) => `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`
const open = (url: string, headers: Record<string, string> = {}) => app.handle(new Request(url, { headers }))

describe('create', () => {
  test('defaults: 24 hours, unlimited; the seed object plus url; bypasses payment', async () => {
    const reply = await call(app, 'POST', linkPath(), { wallet: owner })
    expect(reply.status).toBe(201)
    const link = reply.body
    const now = Math.floor(Date.now() / 1000)
    expect(link).toEqual({
      id: expect.any(String),
      entry_id: paid.id,
      feed_id: feed.id,
      access_token: expect.any(String),
      access_url: `${app.url}/v1/access/${link.access_token}`,
      url: link.access_url,
      expires_at: expect.any(Number),
      max_uses: null,
      current_uses: 0,
      description: null,
      created_at: expect.any(Number),
      is_active: true,
      last_used_at: null,
    })
    expect(Math.abs(link.expires_at - (now + 86400))).toBeLessThan(10)
    expect(link.access_token.split('.')).toHaveLength(3)
    // Paid entry: 402 without the link, the bytes with it, inline.
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`)).status).toBe(402)
    const opened = await open(link.access_url)
    expect(opened.status).toBe(200)
    expect(opened.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(opened.headers.get('content-disposition')).toBe('inline')
    expect(await opened.text()).toBe('members only')
  })

  test('with expires_at, max_uses and description; free entries too', async () => {
    const free = await createEntry(app, owner, feed.id, { content_base64: b64('free bytes') })
    const expires = Math.floor(Date.now() / 1000) + 600
    const reply = await call(app, 'POST', linkPath(free), {
      wallet: owner,
      body: { expires_at: expires, max_uses: 3, description: 'for the newsletter' },
    })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({ expires_at: expires, max_uses: 3, description: 'for the newsletter', current_uses: 0 })
    expect(await (await open(reply.body.url)).text()).toBe('free bytes')
  })

  test('errors: 401, 400 INVALID_EXPIRES_AT, 403 UNAUTHORIZED, 404 ENTRY_NOT_FOUND, bad max_uses', async () => {
    expect((await call(app, 'POST', linkPath())).status).toBe(401)
    for (const expires_at of [Math.floor(Date.now() / 1000) - 5, 0, 'tomorrow', 1.5]) {
      const reply = await call(app, 'POST', linkPath(), { wallet: owner, body: { expires_at } })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_EXPIRES_AT')
    }
    const stranger = await call(app, 'POST', linkPath(), { wallet: newWallet() })
    expect(stranger.status).toBe(403)
    expect(stranger.body.code).toBe('UNAUTHORIZED')
    for (const path of [
      `/v1/feeds/${feed.id}/entries/01900000-0000-7000-8000-000000000000/access-link`,
      `/v1/feeds/01900000-0000-7000-8000-000000000000/entries/${paid.id}/access-link`,
    ]) {
      const missing = await call(app, 'POST', path, { wallet: owner })
      expect(missing.status).toBe(404)
      expect(missing.body.code).toBe('ENTRY_NOT_FOUND')
    }
    for (const max_uses of [0, -1, 2.5, 'many']) {
      expect((await call(app, 'POST', linkPath(), { wallet: owner, body: { max_uses } })).status).toBe(400)
    }
  })
})

describe('use counting', () => {
  test('max_uses 5 and 200 concurrent opens: exactly 5 succeed, the rest 410 ACCESS_LINK_EXHAUSTED', async () => {
    const link = (await call(app, 'POST', linkPath(), { wallet: owner, body: { max_uses: 5 } })).body
    const replies = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const r = await open(link.url)
        return { status: r.status, text: await r.text() }
      }),
    )
    expect(replies.filter((r) => r.status === 200).map((r) => r.text)).toEqual(Array(5).fill('members only'))
    const refusals = replies.filter((r) => r.status === 410)
    expect(refusals).toHaveLength(195)
    expect(JSON.parse(refusals[0].text)).toMatchObject({ code: 'ACCESS_LINK_EXHAUSTED', error: expect.any(String) })
    const listed = await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/access-links`, { wallet: owner })
    expect(listed.body.data.find((l: any) => l.id === link.id)).toMatchObject({
      current_uses: 5,
      max_uses: 5,
      last_used_at: expect.any(Number),
    })
  })

  test('receipt URLs (content_url) are not counted and not listed', async () => {
    const free = await createEntry(app, owner, feed.id, { content_base64: b64('receipt') })
    const { content_url } = (await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${free.id}`)).body
    for (let i = 0; i < 3; i++) expect((await open(content_url)).status).toBe(200)
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${free.id}/access-links`, { wallet: owner })).body.data).toEqual([])
  })

  test('expired → 410 ACCESS_LINK_EXPIRED; revoked → 410 ACCESS_LINK_REVOKED; deleted entry → 404; other tokens → 403', async () => {
    // An hour's life, then the test clock an hour and a minute on: however slow the machine, the link is made
    // before it expires, and opened after.
    const expiring = (await call(app, 'POST', linkPath(), { wallet: owner, body: { expires_at: Math.floor(Date.now() / 1000) + 3600 } }))
      .body
    expect((await open(expiring.url)).status).toBe(200)
    setClockOffset(3660)
    try {
      const expired = await open(expiring.url)
      expect(expired.status).toBe(410)
      expect((await expired.json()).code).toBe('ACCESS_LINK_EXPIRED')
    } finally {
      setClockOffset(0)
    }

    const revoked = (await call(app, 'POST', linkPath(), { wallet: owner })).body
    expect((await open(revoked.url)).status).toBe(200) // opened before: its records are kept until they change
    expect((await call(app, 'DELETE', `/v1/access-links/${revoked.id}`, { wallet: newWallet() })).status).toBe(403)
    expect((await call(app, 'DELETE', `/v1/access-links/${revoked.id}`)).status).toBe(401)
    expect((await call(app, 'DELETE', '/v1/access-links/01900000-0000-7000-8000-000000000000', { wallet: owner })).status).toBe(404)
    expect((await call(app, 'DELETE', `/v1/access-links/${revoked.id}`, { wallet: owner })).status).toBe(204)
    const refused = await open(revoked.url)
    expect(refused.status).toBe(410)
    expect((await refused.json()).code).toBe('ACCESS_LINK_REVOKED')
    const listed = (await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/access-links`, { wallet: owner })).body.data
    expect(listed.find((l: any) => l.id === revoked.id).is_active).toBe(false)

    const doomed = await createEntry(app, owner, feed.id, { content_base64: b64('gone soon') })
    const link = (await call(app, 'POST', linkPath(doomed), { wallet: owner })).body
    expect((await open(link.url)).status).toBe(200)
    expect((await call(app, 'DELETE', `/v1/feeds/${feed.id}/entries/${doomed.id}`, { wallet: owner })).status).toBe(204)
    expect((await open(link.url)).status).toBe(404)

    const [h, p] = link.access_token.split('.')
    const other = await startInProcess() // another server: its own secret
    try {
      const foreignOwner = newWallet()
      const foreignFeed = await createFeed(other, foreignOwner)
      const foreignEntry = await createEntry(other, foreignOwner, foreignFeed.id)
      const foreign = (
        await call(other, 'POST', `/v1/feeds/${foreignFeed.id}/entries/${foreignEntry.id}/access-link`, { wallet: foreignOwner })
      ).body
      for (const token of [
        foreign.access_token,
        `${h}.${p}.AAAA`,
        'not-a-jwt',
        `${h}.${Buffer.from('{"knd":"link"}').toString('base64url')}.x`,
      ]) {
        const reply = await call(app, 'GET', `/v1/access/${token}`)
        expect(reply.status).toBe(403)
        expect(reply.body.code).toBe('INVALID_ACCESS_TOKEN')
      }
    } finally {
      await other.dispose()
    }
  })

  test('Range and ETag work through a link, in a browser-like request', async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(100_000))
    const video = await createEntry(app, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/mp4' })
    const link = (await call(app, 'POST', linkPath(video), { wallet: owner })).body
    const ranged = await open(link.url, { range: 'bytes=100-199' })
    expect(ranged.status).toBe(206)
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(bytes.subarray(100, 200))
    expect(ranged.headers.get('etag')).toBe(`"${video.cid}"`)
  })

  test('listing and revoking are owner only; the list is paginated', async () => {
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/access-links`, { wallet: newWallet() })).status).toBe(403)
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/access-links`)).status).toBe(401)
    const first = await call(app, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/access-links?page_size=2`, { wallet: owner })
    expect(first.body.data).toHaveLength(2)
    expect(first.body.pagination.has_more).toBe(true)
    const next = await call(
      app,
      'GET',
      `/v1/feeds/${feed.id}/entries/${paid.id}/access-links?page_size=2&page_token=${first.body.pagination.next_page_token}`,
      { wallet: owner },
    )
    expect(next.status).toBe(200)
    expect(next.body.data[0].id < first.body.data[1].id).toBe(true)
  })
})
