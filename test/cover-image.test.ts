// GET /v1/feeds/{id}/image: small covers are held in memory and answered on the hot-read path. Whichever path
// answers, the client must get the same status, headers and bytes (ETag, 304 on If-None-Match, immutable when asked
// by CID, ranges, HEAD), and a feed whose cover changes must show the new one at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feedId: string
let cid: string
const ADMIN = { 'admin-api-key': 'cover-image-admin-key-0123456789' }

const png = (fill: number, size = 8192) => {
  const bytes = new Uint8Array(size).fill(fill)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return bytes
}
const dataUri = (bytes: Uint8Array) => `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`
const first = png(1)

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_ADMIN_KEY: ADMIN['admin-api-key'] }) // with the admin routes
  owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'covered', image_url: dataUri(first) })
  feedId = feed.id
  cid = feed.image_cid
})

afterAll(async () => {
  await server?.dispose()
})

const VARYING = new Set(['date', 'x-request-id'])
const headersOf = (r: Response) => {
  const out: Record<string, string> = {}
  r.headers.forEach((value, name) => {
    if (!VARYING.has(name)) out[name] = value
  })
  return out
}

/** The answer of the hot path, once the image is held (the first requests load it), and of the Elysia route. */
async function bothPaths(query: string, init: RequestInit = {}, feed = feedId) {
  const url = `${server.url}/v1/feeds/${feed}/image${query}`
  for (let i = 0; i < 3; i++) await (await fetch(url)).arrayBuffer()
  await Bun.sleep(50)
  const fast = await fetch(url, init)
  const slow = await fetch(`${url}${query ? '&' : '?'}unrelated=1`, init)
  return {
    fast: { status: fast.status, headers: headersOf(fast), bytes: new Uint8Array(await fast.arrayBuffer()) },
    slow: { status: slow.status, headers: headersOf(slow), bytes: new Uint8Array(await slow.arrayBuffer()) },
  }
}

describe('cover image', () => {
  test('the same status, headers and bytes on both paths, many times over', async () => {
    const { fast, slow } = await bothPaths('')
    expect(fast).toEqual(slow)
    expect(fast.status).toBe(200)
    expect(fast.bytes).toEqual(first)
    expect(fast.headers).toMatchObject({
      etag: `"${cid}"`,
      'content-type': 'image/png',
      'cache-control': 'public, max-age=60',
      'content-length': '8192',
      'access-control-allow-origin': '*',
    })
    // Held bytes are answered again and again whole.
    for (let i = 0; i < 5; i++)
      expect(new Uint8Array(await (await fetch(`${server.url}/v1/feeds/${feedId}/image`)).arrayBuffer())).toEqual(first)
  })

  test('asked for by its CID: immutable on both paths', async () => {
    const { fast, slow } = await bothPaths(`?cid=${cid}`)
    expect(fast).toEqual(slow)
    expect(fast.headers['cache-control']).toBe('public, max-age=31536000, immutable')
  })

  test('If-None-Match with its ETag (or *) answers 304 without a body on both paths; another ETag gets the image', async () => {
    for (const tag of [`"${cid}"`, `"other", "${cid}"`, '*']) {
      const { fast, slow } = await bothPaths('', { headers: { 'if-none-match': tag } })
      expect(fast).toEqual(slow)
      expect([fast.status, fast.bytes.length]).toEqual([304, 0])
    }
    const { fast } = await bothPaths('', { headers: { 'if-none-match': '"other"' } })
    expect([fast.status, fast.bytes]).toEqual([200, first])
  })

  test('ranges and HEAD still answer as the route does', async () => {
    const url = `${server.url}/v1/feeds/${feedId}/image`
    const part = await fetch(url, { headers: { range: 'bytes=0-7' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe('bytes 0-7/8192')
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(first.subarray(0, 8))
    const head = await fetch(url, { method: 'HEAD' })
    expect([head.status, head.headers.get('etag')]).toEqual([200, `"${cid}"`])
  })

  test('a new cover shows at once, and one removed leaves at once', async () => {
    await bothPaths('') // the old cover is held
    const second = png(2)
    const patched = await call(server.url, 'PATCH', `/v1/feeds/${feedId}`, { wallet: owner, body: { image_url: dataUri(second) } })
    expect(patched.status).toBe(200)
    const now = await fetch(`${server.url}/v1/feeds/${feedId}/image`)
    expect(now.headers.get('etag')).toBe(`"${patched.body.image_cid}"`)
    expect(new Uint8Array(await now.arrayBuffer())).toEqual(second)

    const bare = await createFeed(server.url, owner, { name: 'no cover' })
    const none = await call(server.url, 'GET', `/v1/feeds/${bare.id}/image`)
    expect([none.status, none.body.code]).toEqual([404, 'NOT_FOUND'])
  })
})

describe('a cover taken down', () => {
  const admin = (action: string, kind: 'feeds' | 'entries', id: string) =>
    call(server.url, 'POST', `/v1/admin/${kind}/${id}/${action}`, { headers: ADMIN, body: { reason: 'an unlawful image' } })
  const attach = (wallet: Wallet, feed: string, body: Record<string, unknown>) =>
    call(server.url, 'PATCH', `/v1/feeds/${feed}`, { wallet, body })

  test(
    "a taken-down feed's cover can be attached to no feed, by CID or by its bytes, nor is served " +
      'under another feed; reinstated, it is again',
    async () => {
      const picture = png(9)
      const down = await createFeed(server.url, owner, { name: 'to be taken down', image_url: dataUri(picture) })
      const other = newWallet()
      const sharing = await createFeed(server.url, other, { name: 'shared the cover before' })
      expect((await attach(other, sharing.id, { image_cid: down.image_cid })).status).toBe(200)
      const bare = await createFeed(server.url, other, { name: 'wants the cover' })
      expect((await bothPaths('', {}, sharing.id)).fast.status).toBe(200) // held on the hot path

      expect((await admin('takedown', 'feeds', down.id)).status).toBe(201)
      expectError(await call(server.url, 'GET', `/v1/feeds/${down.id}/image`), 451, 'TAKEN_DOWN')
      const { fast, slow } = await bothPaths('', {}, sharing.id)
      expect([fast.status, slow.status]).toEqual([451, 451])
      expectError(await call(server.url, 'GET', `/v1/feeds/${sharing.id}/image?cid=${down.image_cid}`), 451, 'TAKEN_DOWN')
      for (const image_url of [down.image_cid, dataUri(picture), b64(picture)]) {
        expectError(await call(server.url, 'POST', '/v1/feeds', { wallet: other, body: { name: 'again', image_url } }), 451, 'TAKEN_DOWN')
        expectError(await attach(other, bare.id, { image_url }), 451, 'TAKEN_DOWN')
      }
      expectError(await attach(other, bare.id, { image_cid: down.image_cid }), 451, 'TAKEN_DOWN')
      expect((await call(server.url, 'GET', `/v1/feeds/${bare.id}`)).body.image_cid).toBeNull()

      expect((await admin('reinstate', 'feeds', down.id)).status).toBe(200)
      const back = await bothPaths('', {}, sharing.id)
      expect([back.fast.status, back.slow.status]).toEqual([200, 200])
      expect(back.fast.bytes).toEqual(picture)
      expect((await attach(other, bare.id, { image_cid: down.image_cid })).body.image_cid).toBe(down.image_cid)
    },
  )

  test('an image entry taken down cannot come back as a cover', async () => {
    const picture = png(10)
    const feed = await createFeed(server.url, owner, { name: 'pictures' })
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(picture), mime_type: 'image/png' })
    expect((await admin('takedown', 'entries', entry.id)).status).toBe(201)
    expectError(await attach(owner, feed.id, { image_url: dataUri(picture) }), 451, 'TAKEN_DOWN')
    expect((await admin('reinstate', 'entries', entry.id)).status).toBe(200)
    expect((await attach(owner, feed.id, { image_url: dataUri(picture) })).body.image_cid).toBe(entry.cid)
  })
})
