// The large-item file cache (content/file-cache.ts) after a power loss: a file is synced before it is renamed into
// place, and one found with the wrong size (truncated, as a crash or a hand can leave it) is never served under the
// item's ETag: it is written again from the store.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, statSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'

const SIZE = 2 * 1024 * 1024 + 5 // over the 1 MiB served from memory: served from a file
let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server?.dispose()
})

test('a truncated cache file is not served: detected at first use and written again from the store', async () => {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const bytes = crypto.getRandomValues(new Uint8Array(SIZE))
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/mp4' })
  const url = () => `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
  const file = join(server.dataDir, 'cache', 'content', entry.cid)
  expect((await fetch(url())).status).toBe(200)
  expect(statSync(file).size).toBe(SIZE)

  await server.stop()
  truncateSync(file, 1024 * 1024)
  await server.restart()
  const whole = await fetch(url())
  expect(whole.status).toBe(200)
  expect(whole.headers.get('etag')).toBe(`"${entry.cid}"`)
  expect(whole.headers.get('content-length')).toBe(String(SIZE))
  expect(Buffer.compare(new Uint8Array(await whole.arrayBuffer()), bytes)).toBe(0)
  expect(statSync(file).size).toBe(SIZE)
  const tail = await fetch(url(), { headers: { range: 'bytes=-5' } })
  expect(Buffer.compare(new Uint8Array(await tail.arrayBuffer()), bytes.subarray(SIZE - 5))).toBe(0)

  // Truncated while the server runs (after it listed the directory): the same.
  truncateSync(file, 10)
  const again = await fetch(url(), { headers: { range: `bytes=${SIZE - 3}-` } })
  expect(again.status).toBe(206)
  expect(Buffer.compare(new Uint8Array(await again.arrayBuffer()), bytes.subarray(SIZE - 3))).toBe(0)
  expect(readdirSync(join(server.dataDir, 'cache', 'content'))).toEqual([entry.cid]) // no temporary file left
})
