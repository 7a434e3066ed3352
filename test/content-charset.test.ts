// Text entries stored without a charset are served as UTF-8, on every path that serves bytes; a charset the creator
// gave is kept, and other types are left as they are.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

const TEXT = 'héllo wörld ✓ — 日本語'
let server: TestServer
let owner: Wallet
let feedId: string
beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner)).id
})
afterAll(() => server.dispose())

async function stored(mime_type: string, content: string | Uint8Array = TEXT) {
  const entry = await createEntry(server.url, owner, feedId, { content_base64: b64(content), mime_type })
  return `${server.url}/v1/feeds/${feedId}/entries/${entry.id}/content`
}

test('text/* without a charset: charset=utf-8 on GET, HEAD, ranges and access links; the bytes unchanged', async () => {
  for (const [mime, served] of [
    ['text/plain', 'text/plain; charset=utf-8'],
    ['text/markdown', 'text/markdown; charset=utf-8'],
    ['Text/Plain; format=flowed', 'Text/Plain; format=flowed; charset=utf-8'],
  ]) {
    const url = await stored(mime)
    const got = await fetch(url)
    expect(got.headers.get('content-type')).toBe(served)
    expect(await got.text()).toBe(TEXT)
    const head = await fetch(url, { method: 'HEAD' })
    expect(head.headers.get('content-type')).toBe(served)
    const range = await fetch(url, { headers: { range: 'bytes=0-1' } })
    expect(range.status).toBe(206)
    expect(range.headers.get('content-type')).toBe(served)
    await range.arrayBuffer()
    const [feed, , entryId] = url.split('/v1/feeds/')[1].split('/')
    const link = await call(server.url, 'POST', `/v1/feeds/${feed}/entries/${entryId}/access-link`, {
      headers: await authHeaders(server.url, owner),
      body: {},
    })
    const opened = await fetch(link.body.access_url)
    expect(opened.headers.get('content-type')).toBe(served)
    expect(await opened.text()).toBe(TEXT)
  }
})

test('text/html without a charset gets it too, and stays sandboxed', async () => {
  const got = await fetch(await stored('text/html', '<p>héllo</p>'))
  expect(got.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(got.headers.get('content-security-policy')).toBe('sandbox')
  await got.text()
})

test('a large text entry, served from the file cache, gets it too', async () => {
  const big = TEXT.repeat(80_000) // about 2.5 MB: above the size served from memory
  const url = await stored('text/plain', big)
  for (let i = 0; i < 2; i++) {
    const got = await fetch(url)
    expect(got.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(await got.text()).toBe(big)
  }
})

test('a charset the creator gave is kept; non-text types are left as they are', async () => {
  for (const [mime, served] of [
    ['text/plain; charset=iso-8859-1', 'text/plain; charset=iso-8859-1'],
    ['text/plain;CHARSET="UTF-16"', 'text/plain;CHARSET="UTF-16"'],
    ['application/json', 'application/json'],
    ['image/png', 'image/png'],
  ]) {
    const got = await fetch(await stored(mime, mime === 'image/png' ? new Uint8Array([137, 80, 78, 71]) : TEXT))
    expect(got.headers.get('content-type')).toBe(served)
    await got.arrayBuffer()
  }
})
