// Large entries are served from files (content/file-cache.ts): whole, by range and by HEAD with their exact
// Content-Length, and sixteen concurrent downloads of a 37 MB entry do not cost sixteen copies of it in memory.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from './helpers/server.ts'
import { b64, createEntry, createFeed, newWallet } from './helpers/api.ts'

const SIZE = 37 * 1024 * 1024 + 123 // just under the 50 MB base64 limit, not a multiple of the chunk size
let server: TestServer
let bytes: Uint8Array
let path: string
const url = () => `${server.url}${path}` // the port changes on restart
let cid: string

/** Resident set size of a process, in bytes. */
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

beforeAll(async () => {
  server = await startTestServer()
  bytes = new Uint8Array(SIZE)
  for (let offset = 0; offset < SIZE; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, Math.min(SIZE, offset + 65_536)))
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/mp4', is_free: true })
  path = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
  cid = entry.cid
}, 120_000)

afterAll(async () => {
  await server?.dispose()
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
      const sizes = await Promise.all(Array.from({ length: 16 }, async () => {
        const response = await fetch(url())
        expect(response.headers.get('content-length')).toBe(String(SIZE))
        let n = 0
        for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) n += chunk.byteLength // read slowly enough to overlap, keep nothing
        return n
      }))
      expect(sizes).toEqual(Array(16).fill(SIZE))
    } finally {
      clearInterval(sampler)
    }
    const growth = peak - before
    console.log(`16 × ${(SIZE / 2 ** 20).toFixed(0)} MiB downloads: RSS ${(before / 2 ** 20).toFixed(0)} → peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${(growth / 2 ** 20).toFixed(0)} MiB; 16 copies would be ${(16 * SIZE / 2 ** 20).toFixed(0)} MiB)`)
    expect(growth).toBeLessThan(256 * 1024 * 1024)
    expect(readdirSync(join(server.dataDir, 'cache', 'content'))).toEqual([cid]) // written once, by the first request
  }, 60_000)
})
