// Large entries are served from files (content/file-cache.ts): whole, by range and by HEAD with their exact
// Content-Length, and sixteen concurrent downloads of a 37 MB entry do not cost sixteen copies of it in memory.
// Large uploads are written to a file while they arrive and stored once read whole: the same CID as a whole-body
// upload, bounded memory, and a client that goes away or sends bad content midway leaves nothing behind.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { connect } from 'node:net'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'

const SIZE = 37 * 1024 * 1024 + 123 // just under the 50 MB base64 limit, not a multiple of the chunk size
let server: TestServer
let bytes: Uint8Array
let path: string
const url = () => `${server.url}${path}` // the port changes on restart
let cid: string
let owner: Wallet
let feedId: string

/** Resident set size of a process, in bytes. */
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

beforeAll(async () => {
  server = await startTestServer()
  bytes = new Uint8Array(SIZE)
  for (let offset = 0; offset < SIZE; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, Math.min(SIZE, offset + 65_536)))
  owner = newWallet()
  const feed = await createFeed(server.url, owner)
  feedId = feed.id
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/mp4', is_free: true })
  path = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
  cid = entry.cid
}, 120_000)

afterAll(async () => {
  await server?.dispose()
})

/** RSS of the server sampled every 20 ms while `work` runs: its growth over the value before. */
async function rssGrowthDuring(work: () => Promise<unknown>): Promise<number> {
  const before = rss(server.pid)
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, rss(server.pid))), 20)
  try {
    await work()
  } finally {
    clearInterval(sampler)
  }
  return Math.max(peak, rss(server.pid)) - before
}

const entriesOf = async (id: string) => (await call(server.url, 'GET', `/v1/feeds/${id}/entries?page_size=100`)).body.data.length

/** Nothing of refused uploads is left: no file waiting, no block that no entry names (gc, asked of the server). */
async function expectNothingLeft() {
  expect(readdirSync(join(server.dataDir, 'cache', 'uploads'))).toEqual([])
  const dry = await trellis(['gc', '--dry-run'], server.dataDir)
  expect(dry.code).toBe(0)
  expect(dry.json).toMatchObject({ removed: 0, dry_run: true })
}

// Before the downloads below: they restart the server, and these measure uploads on a running one.
describe('large uploads, written to a file while they arrive', () => {
  test('RSS grows by less than twice the payload; the same bytes sent without a length (read whole) get the same CID', async () => {
    const fresh = new Uint8Array(SIZE)
    for (let offset = 0; offset < SIZE; offset += 65_536) crypto.getRandomValues(fresh.subarray(offset, Math.min(SIZE, offset + 65_536)))
    let streamed: any
    const growth = await rssGrowthDuring(
      async () => (streamed = await createEntry(server.url, owner, feedId, { content_base64: b64(fresh), mime_type: 'video/mp4' })),
    )
    console.log(`37 MiB upload: RSS +${(growth / 2 ** 20).toFixed(0)} MiB (${(growth / SIZE).toFixed(2)} x the payload)`)
    expect(growth).toBeLessThan(2 * SIZE)

    // Chunked, with no Content-Length: the body is read whole before anything is stored.
    const text = JSON.stringify({ content_base64: b64(fresh), mime_type: 'video/mp4' })
    const body = new ReadableStream({
      start(controller) {
        for (let at = 0; at < text.length; at += 4 * 1024 * 1024) controller.enqueue(Buffer.from(text.slice(at, at + 4 * 1024 * 1024)))
        controller.close()
      },
    })
    const whole = await fetch(`${server.url}/v1/feeds/${feedId}/entries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await authHeaders(server.url, owner)) },
      body,
    })
    expect(whole.status).toBe(201)
    expect(((await whole.json()) as any).cid).toBe(streamed.cid) // (the bytes of a streamed upload are checked below)
  })

  test('a client that goes away halfway: no entry, no hang; the same upload then succeeds', async () => {
    const count = await entriesOf(feedId)
    const body = JSON.stringify({ content_base64: b64(bytes), mime_type: 'video/mp4' })
    const headers = {
      host: '127.0.0.1',
      'content-type': 'application/json',
      'content-length': String(body.length),
      ...(await authHeaders(server.url, owner)),
    }
    const request = `POST /v1/feeds/${feedId}/entries HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(request)
        socket.write(body.slice(0, body.length / 2), () => setTimeout(() => (socket.destroy(), resolve()), 300))
      })
      socket.on('error', reject)
    })
    await Bun.sleep(300)
    expect((await call(server.url, 'GET', '/health')).status).toBe(200)
    expect(await entriesOf(feedId)).toBe(count)
    await expectNothingLeft()
    const again = await createEntry(server.url, owner, feedId, { content_base64: b64(bytes), mime_type: 'video/mp4' })
    expect(again.cid).toBe(cid)
    expect(await entriesOf(feedId)).toBe(count + 1)
  })

  test("bad content found at the end, or a feed that is not the signer's: the documented errors, no entry", async () => {
    const count = await entriesOf(feedId)
    const five = b64(bytes.subarray(0, 5 * 1024 * 1024))
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
        wallet: owner,
        body: { content_base64: `${five.slice(0, -4)}A!==`, mime_type: 'video/mp4' },
      }),
      400,
      'INVALID_BASE64',
    )
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
        wallet: owner,
        body: { content_base64: five, mime_type: 'application/x-unknown' },
      }),
      400,
      'UNSUPPORTED_MIME_TYPE',
    )
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
        wallet: newWallet(),
        body: { content_base64: five, mime_type: 'video/mp4' },
      }),
      403,
      'UNAUTHORIZED',
    )
    // Refused by the schema after the content arrived whole, and by the rules on price and expiry.
    const refused = await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
      wallet: owner,
      body: { content_base64: five, mime_type: 'video/mp4', title: 7 },
    })
    expect(refused.status).toBe(400)
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
        wallet: owner,
        body: { content_base64: five, mime_type: 'video/mp4', is_free: false, price: { amount: '1.5' } },
      }),
      400,
      'INVALID_PRICE',
    )
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, {
        wallet: owner,
        body: { content_base64: five, mime_type: 'video/mp4', expires_at: 1 },
      }),
      400,
      'INVALID_EXPIRES_AT',
    )
    expect(await entriesOf(feedId)).toBe(count)
    await expectNothingLeft()
  })
})

describe('a 37 MB entry', () => {
  test('GET whole: exact bytes and Content-Length; then served from a file named by its CID', async () => {
    const response = await fetch(url())
    expect(response.status).toBe(200)
    expect(response.headers.get('content-length')).toBe(String(SIZE))
    expect(response.headers.get('etag')).toBe(`"${cid}"`)
    expect(response.headers.get('content-type')).toBe('video/mp4')
    expect(response.headers.get('content-disposition')).toBe('inline')
    expect(Buffer.compare(new Uint8Array(await response.arrayBuffer()), bytes)).toBe(0)
    expect(existsSync(join(server.dataDir, 'cache', 'content', cid))).toBe(true)
    expect(readdirSync(join(server.dataDir, 'cache', 'content'))).toEqual([cid]) // no temporary file left
  })

  test('Range (closed, open-ended, suffix) and HEAD', async () => {
    const closed = await fetch(url(), { headers: { range: 'bytes=1000000-1999999' } })
    expect(closed.status).toBe(206)
    expect(closed.headers.get('content-range')).toBe(`bytes 1000000-1999999/${SIZE}`)
    expect(closed.headers.get('content-length')).toBe('1000000')
    expect(closed.headers.get('content-disposition')).toBe('inline')
    expect(Buffer.compare(new Uint8Array(await closed.arrayBuffer()), bytes.subarray(1_000_000, 2_000_000))).toBe(0)
    const open = await fetch(url(), { headers: { range: `bytes=${SIZE - 10}-` } })
    expect(open.status).toBe(206)
    expect(Buffer.compare(new Uint8Array(await open.arrayBuffer()), bytes.subarray(SIZE - 10))).toBe(0)
    const suffix = await fetch(url(), { headers: { range: 'bytes=-5' } })
    expect(Buffer.compare(new Uint8Array(await suffix.arrayBuffer()), bytes.subarray(SIZE - 5))).toBe(0)
    const head = await fetch(url(), { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(SIZE))
  })

  test('16 concurrent downloads after a restart (first use writes the file once): RSS grows by far less than 16 copies', async () => {
    await server.stop()
    rmSync(join(server.dataDir, 'cache'), { recursive: true })
    await server.restart()
    const before = rss(server.pid)
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rss(server.pid))), 20)
    try {
      const sizes = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const response = await fetch(url())
          expect(response.headers.get('content-length')).toBe(String(SIZE))
          let n = 0
          // Read slowly enough to overlap, keep nothing.
          for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) n += chunk.byteLength
          return n
        }),
      )
      expect(sizes).toEqual(Array(16).fill(SIZE))
    } finally {
      clearInterval(sampler)
    }
    const growth = peak - before
    console.log(
      `16 × ${(SIZE / 2 ** 20).toFixed(0)} MiB downloads: RSS ${(before / 2 ** 20).toFixed(0)} → peak ${(peak / 2 ** 20).toFixed(0)} MiB ` +
        `(+${(growth / 2 ** 20).toFixed(0)} MiB; 16 copies would be ${((16 * SIZE) / 2 ** 20).toFixed(0)} MiB)`,
    )
    expect(growth).toBeLessThan(256 * 1024 * 1024)
    expect(readdirSync(join(server.dataDir, 'cache', 'content'))).toEqual([cid]) // written once, by the first request
  })
})
