// GET /v1/feeds/{id}/image: small covers are held in memory and answered on the hot-read path. Whichever path
// answers, the client must get the same status, headers and bytes (ETag, 304 on If-None-Match, immutable when asked
// by CID, ranges, HEAD), and a feed whose cover changes must show the new one at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createFeed, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feedId: string
let cid: string

const png = (fill: number, size = 8192) => {
  const bytes = new Uint8Array(size).fill(fill)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return bytes
}
const dataUri = (bytes: Uint8Array) => `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`
const first = png(1)

beforeAll(async () => {
  server = await startTestServer({})
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
  r.headers.forEach((value, name) => { if (!VARYING.has(name)) out[name] = value })
  return out
}

/** The answer of the hot path, once the image is held (the first requests load it), and of the Elysia route. */
async function bothPaths(query: string, init: RequestInit = {}) {
  const url = `${server.url}/v1/feeds/${feedId}/image${query}`
  for (let i = 0; i < 3; i++) await (await fetch(url)).arrayBuffer()
  await Bun.sleep(50)
  const fast = await fetch(url, init)
  const slow = await fetch(`${url}${query ? '&' : '?'}unrelated=1`, init)
  return { fast: { status: fast.status, headers: headersOf(fast), bytes: new Uint8Array(await fast.arrayBuffer()) }, slow: { status: slow.status, headers: headersOf(slow), bytes: new Uint8Array(await slow.arrayBuffer()) } }
}

describe('cover image', () => {
  test('the same status, headers and bytes on both paths, many times over', async () => {
    const { fast, slow } = await bothPaths('')
    expect(fast).toEqual(slow)
    expect(fast.status).toBe(200)
    expect(fast.bytes).toEqual(first)
    expect(fast.headers).toMatchObject({ etag: `"${cid}"`, 'content-type': 'image/png', 'cache-control': 'public, max-age=60', 'content-length': '8192', 'access-control-allow-origin': '*' })
    // Held bytes are answered again and again whole.
    for (let i = 0; i < 5; i++) expect(new Uint8Array(await (await fetch(`${server.url}/v1/feeds/${feedId}/image`)).arrayBuffer())).toEqual(first)
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
