// What counts as a use of an access link, over a real socket: a full 200 GET counts one; a range session counts
// once; HEAD, 304, 416, refusals, aborted and unanswered (pipelined) requests count none.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feed: any

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'link uses' })
})
afterAll(() => server.dispose())

async function linkTo(entry: any, body: Record<string, unknown> = {}) {
  const reply = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`, { wallet: owner, body })
  expect(reply.status).toBe(201)
  return reply.body
}

async function usesOf(entry: any, link: any): Promise<number> {
  const listed = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}/access-links?page_size=100`, { wallet: owner })
  return listed.body.data.find((l: any) => l.id === link.id).current_uses
}

const open = (link: any, init: RequestInit = {}) => fetch(link.url, init)

/** Writes raw bytes on a new connection and collects what comes back until the server closes or `ms` pass. */
function raw(link: any, request: string, opts: { closeRightAway?: boolean; ms?: number } = {}): Promise<string> {
  const { port, pathname } = { port: Number(new URL(server.url).port), pathname: new URL(link.url).pathname }
  return new Promise((resolve) => {
    let got = ''
    const socket = connect(port, '127.0.0.1', () => {
      const bytes = request.replaceAll('<path>', pathname)
      if (opts.closeRightAway)
        socket.end(bytes) // the request, then the end of the connection
      else socket.write(bytes)
    })
    socket.on('data', (d) => (got += d.toString('latin1')))
    socket.on('error', () => {})
    socket.on('close', () => resolve(got))
    setTimeout(() => socket.destroy(), opts.ms ?? 1000)
  })
}

describe('use counting', () => {
  test('max_uses 2 survives HEAD, 304 and 416, serves two full GETs, then refuses with ACCESS_LINK_EXHAUSTED', async () => {
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('twice only') })
    const link = await linkTo(entry, { max_uses: 2 })
    const head = await open(link, { method: 'HEAD' })
    expect(head.status).toBe(200)
    const notModified = await open(link, { headers: { 'if-none-match': `"${entry.cid}"` } })
    expect(notModified.status).toBe(304)
    const unsatisfiable = await open(link, { headers: { range: 'bytes=5000-' } })
    expect(unsatisfiable.status).toBe(416)
    await unsatisfiable.text()
    expect(await usesOf(entry, link)).toBe(0)
    for (let i = 0; i < 2; i++) {
      const full = await open(link)
      expect(full.status).toBe(200)
      expect(await full.text()).toBe('twice only')
    }
    expect(await usesOf(entry, link)).toBe(2)
    const third = await call(server.url, 'GET', new URL(link.url).pathname)
    expectError(third, 410, 'ACCESS_LINK_EXHAUSTED')
    // The refusal is the same whatever the request would have been.
    expect((await open(link, { method: 'HEAD' })).status).toBe(410)
    expectError(
      await call(server.url, 'GET', new URL(link.url).pathname, { headers: { range: 'bytes=0-1' } }),
      410,
      'ACCESS_LINK_EXHAUSTED',
    )
    expect(await usesOf(entry, link)).toBe(2)
  })

  test('a video read in 50 KB ranges counts one use; another client counts its own; a full GET still counts', async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(2_000_000))
    const video = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/mp4' })
    const link = await linkTo(video, { max_uses: 3 })
    const player = { 'user-agent': 'test-player/1.0' }
    const step = 50_000
    for (let start = 0; start < bytes.length; start += step) {
      const part = await open(link, { headers: { ...player, range: `bytes=${start}-${start + step - 1}` } })
      expect(part.status).toBe(206)
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(start, start + step))
    }
    // Seeking back, and concurrent ranges as players fire them, are in the same session.
    const again = await Promise.all(
      [0, 500_000, 1_500_000].map((s) => open(link, { headers: { ...player, range: `bytes=${s}-${s + step - 1}` } }).then((r) => r.status)),
    )
    expect(again).toEqual([206, 206, 206])
    expect(await usesOf(video, link)).toBe(1)

    const other = await open(link, { headers: { 'user-agent': 'another-player/2.0', range: 'bytes=0-99' } })
    expect(other.status).toBe(206)
    await other.arrayBuffer()
    expect(await usesOf(video, link)).toBe(2)
    const full = await open(link, { headers: player })
    expect(full.status).toBe(200)
    await full.arrayBuffer()
    expect(await usesOf(video, link)).toBe(3)
    // The player's session goes on once the link has no use left; a new client's range is refused.
    const more = await open(link, { headers: { ...player, range: 'bytes=0-99' } })
    expect(more.status).toBe(206)
    await more.arrayBuffer()
    expectError(
      await call(server.url, 'GET', new URL(link.url).pathname, { headers: { 'user-agent': 'latecomer/1.0', range: 'bytes=0-99' } }),
      410,
      'ACCESS_LINK_EXHAUSTED',
    )
    expect(await usesOf(video, link)).toBe(3)
  })

  test('a range session is worth at most three copies of the entry: ranges cannot download it without limit', async () => {
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('x'.repeat(1000)) })
    const link = await linkTo(entry, { max_uses: 1 })
    const client = { 'user-agent': 'greedy/1.0' }
    for (let i = 0; i < 3; i++) {
      const whole = await open(link, { headers: { ...client, range: 'bytes=0-' } })
      expect(whole.status).toBe(206)
      expect((await whole.text()).length).toBe(1000)
    }
    expectError(
      await call(server.url, 'GET', new URL(link.url).pathname, { headers: { ...client, range: 'bytes=0-' } }),
      410,
      'ACCESS_LINK_EXHAUSTED',
    )
    expect(await usesOf(entry, link)).toBe(1)
  })

  test('a request whose client leaves before the answer is sent counts no use', async () => {
    // Large enough to be served from a file, so the server has work to do before it would send anything.
    const bytes = crypto.getRandomValues(new Uint8Array(2_000_000))
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes) })
    const link = await linkTo(entry, { max_uses: 1 })
    for (let i = 0; i < 5; i++) await raw(link, 'GET <path> HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { closeRightAway: true })
    await Bun.sleep(300)
    expect(await usesOf(entry, link)).toBe(0)
    const read = await open(link)
    expect(read.status).toBe(200)
    expect(new Uint8Array(await read.arrayBuffer())).toEqual(bytes)
    expect(await usesOf(entry, link)).toBe(1)
  })

  test('pipelined GETs on one connection: no more uses are counted than answers delivered', async () => {
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('pipelined') })
    const link = await linkTo(entry, { max_uses: 5 })
    const one = 'GET <path> HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    const got = await raw(link, one + one, { ms: 1500 })
    const delivered = (got.match(/HTTP\/1\.1 200 /g) ?? []).length
    expect(got.split('pipelined').length - 1).toBe(delivered) // each 200 delivered carried the bytes
    expect(await usesOf(entry, link)).toBeLessThanOrEqual(delivered)
  })
})
