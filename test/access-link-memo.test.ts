// Counting an access link's use writes only access_links, of which no read is kept: the read memo keeps what it holds
// across opens (each open used to empty it, so on a read market every open, and every read after one, read again).
// Each open is still counted, durably, before its bytes are sent (access-link-uses/-commits test how exactly).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

let server: TestServer

beforeAll(async () => {
  // No scheduled rebuild of the statistics: nothing but the test's own requests writes meanwhile.
  server = await startTestServer({ TRELLIS_STATS_REFRESH_S: '3600', TRELLIS_RANKINGS_REFRESH_S: '3600' })
})
afterAll(() => server?.dispose())

/** Characters the read memo holds (GET /metrics). */
async function memoChars(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return Number(/^trellis_cache_bytes\{cache="reads"\} (\d+)$/m.exec(text)![1])
}

test('opening an access link counts its use and leaves the read memo as it was', async () => {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'kept reads' })
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('x'.repeat(1024)), mime_type: 'text/plain' })
  const link = (await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`, { wallet: owner })).body
  const reads = [`/v1/feeds/${feed.id}`, '/v1/feeds', '/v1/feeds?page_size=100', `/v1/feeds/${feed.id}/entries`, '/v1/categories']
  for (const path of reads) expect((await fetch(`${server.url}${path}`)).status, path).toBe(200)
  // Settled: reading again keeps the same results (nothing else writes).
  await fetch(`${server.url}${reads[0]}`)
  const held = await memoChars()
  expect(held).toBeGreaterThan(1000)

  for (let i = 0; i < 3; i++) {
    const opened = await fetch(link.url)
    expect([opened.status, (await opened.text()).length]).toEqual([200, 1024])
  }
  await fetch(`${server.url}${reads[0]}`) // a read after the opens: the memo looks at the records' version
  expect(await memoChars()).toBeGreaterThanOrEqual(held)

  const listed = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}/access-links`, { wallet: owner })
  expect(listed.body.data.find((l: { id: string }) => l.id === link.id).current_uses).toBe(3)
})
