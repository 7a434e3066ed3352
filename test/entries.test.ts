import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feed: any

beforeAll(async () => {
  server = await startTestServer({ TRELLIS_TEST_CLOCK_FILE: testClockFile() })
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'entries' })
})
afterAll(() => server.dispose())

const MIME_SAMPLES: Record<string, Uint8Array<ArrayBuffer>> = {
  'text/plain': new TextEncoder().encode('plain text ✓\n'),
  'text/markdown': new TextEncoder().encode('# Title\n\n*body*'),
  'text/html': new TextEncoder().encode('<html><script>alert(1)</script></html>'),
  'application/json': new TextEncoder().encode('{"a":[1,2,3]}'),
  'image/png': new Uint8Array(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')),
  'image/jpeg': new Uint8Array(Buffer.from('ffd8ffe000104a464946', 'hex')),
  'image/gif': new TextEncoder().encode('GIF89a....'),
  'image/webp': new TextEncoder().encode('RIFF....WEBPVP8 '),
  'image/svg+xml': new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
  'video/mp4': crypto.getRandomValues(new Uint8Array(300_000)),
  'video/quicktime': crypto.getRandomValues(new Uint8Array(1000)),
  'video/webm': crypto.getRandomValues(new Uint8Array(1000)),
  'audio/mpeg': crypto.getRandomValues(new Uint8Array(600_000)),
  'audio/wav': new TextEncoder().encode('RIFF....WAVEfmt '),
  'audio/ogg': new TextEncoder().encode('OggS....'),
  'application/pdf': new TextEncoder().encode('%PDF-1.4\n%%EOF'),
}

const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer())
/** The Content-Type an entry is served with: text without a charset is served as UTF-8. */
const servedAs = (mime: string) => (/^text\//i.test(mime) && !/;[ \t]*charset=/i.test(mime) ? `${mime}; charset=utf-8` : mime)

describe('create and read every supported MIME type', () => {
  test('bytes in = bytes out, with the right headers, via /content and via content_url', async () => {
    for (const [mime_type, bytes] of Object.entries(MIME_SAMPLES)) {
      const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type, title: mime_type })
      expect(entry.mime_type).toBe(mime_type)
      const content = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`)
      expect(content.status).toBe(200)
      expect(content.headers.get('content-type')).toBe(servedAs(mime_type))
      expect(content.headers.get('content-length')).toBe(String(bytes.byteLength))
      expect(content.headers.get('etag')).toBe(`"${entry.cid}"`)
      expect(content.headers.get('x-content-type-options')).toBe('nosniff')
      const sandboxed = mime_type === 'text/html' || mime_type === 'image/svg+xml'
      expect(content.headers.get('content-security-policy')).toBe(sandboxed ? 'sandbox' : null)
      expect(await bytesOf(content)).toEqual(bytes)

      const got = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)
      expect(got.status).toBe(200)
      expect(got.body.content_url).toStartWith(`${server.url}/v1/access/`)
      const viaUrl = await fetch(got.body.content_url)
      expect(viaUrl.status).toBe(200)
      expect(viaUrl.headers.get('content-type')).toBe(servedAs(mime_type))
      expect(await bytesOf(viaUrl)).toEqual(bytes)
    }
  })

  test('known CID vectors: the CIDs of `ipfs add --cid-version 1`', async () => {
    const hello = await createEntry(server.url, owner, feed.id, { content_base64: b64('hello world\n') })
    expect(hello.cid).toBe('bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4')
    // 1 MiB of zeros: four 256 KiB raw leaves under one dag-pb node.
    const zeros = await createEntry(server.url, owner, feed.id, {
      content_base64: b64(new Uint8Array(1024 * 1024)),
      mime_type: 'application/pdf',
    })
    expect(zeros.cid).toBe('bafybeiggzq4ryi7hscq5hzvzcnk4urnxt3asp37dhgvnjilf7exskximla')
    // The same bytes in another entry give the same CID.
    const again = await createEntry(server.url, owner, feed.id, { content_base64: b64('hello world\n'), mime_type: 'text/markdown' })
    expect(again.cid).toBe(hello.cid)
    expect(again.id).not.toBe(hello.id)
  })

  test('creation echoes the fields and returns the get shape', async () => {
    const expires = Math.floor(Date.now() / 1000) + 3600
    const reply = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
      wallet: owner,
      body: {
        content_base64: b64('x'),
        mime_type: 'text/plain',
        title: 'T',
        description: 'D',
        metadata: '{"k":1}',
        tags: ['q', 'p'],
        is_free: true,
        expires_at: expires,
      },
    })
    expect(reply.status).toBe(201)
    expect(reply.body).toMatchObject({
      feed_id: feed.id,
      mime_type: 'text/plain',
      title: 'T',
      description: 'D',
      metadata: '{"k":1}',
      tags: ['q', 'p'],
      is_free: true,
      is_active: true,
      total_purchases: 0,
      total_revenue: '0',
      price: '0',
      asset: 'USDC',
      expires_at: expires,
    })
    expect(reply.body.created_at).toBe(reply.body.updated_at)
    const got = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${reply.body.id}`)
    const { content_url, ...rest } = got.body
    expect(rest).toEqual(reply.body)
    expect(typeof content_url).toBe('string')
  })
})

describe('validation of create entry', () => {
  const post = (body: unknown, wallet = owner, feedId = feed.id) =>
    call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, { wallet, body })

  test('each rule answers its code', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ mime_type: 'text/plain' }, 400, 'INVALID_BASE64'],
      [{ content_base64: 'aGVsbG8', mime_type: 'application/octet-stream' }, 400, 'UNSUPPORTED_MIME_TYPE'],
      [{ content_base64: 'aGVsbG8' }, 400, 'UNSUPPORTED_MIME_TYPE'],
      [{ content_base64: 'not base64!', mime_type: 'text/plain' }, 400, 'INVALID_BASE64'],
      [{ content_base64: 'aGVs bG8=', mime_type: 'text/plain' }, 400, 'INVALID_BASE64'],
      [{ content_base64: 'aGVsbG8-', mime_type: 'text/plain' }, 400, 'INVALID_BASE64'],
      [{ content_base64: '', mime_type: 'text/plain' }, 400, 'INVALID_BASE64'],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false }, 400, 'INVALID_PRICE'],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: '0', currency: 'USDC' } },
        400,
        'INVALID_PRICE',
      ],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: '1.5', currency: 'USDC' } },
        400,
        'INVALID_PRICE',
      ],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: '-5', currency: 'USDC' } },
        400,
        'INVALID_PRICE',
      ],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: '100', currency: 'ETH' } },
        400,
        'INVALID_PRICE',
      ],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: '100', currency: 'USDC', network: 'base' } },
        400,
        'INVALID_PRICE',
      ],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: false, price: { amount: 1.5 } }, 400, 'INVALID_PRICE'],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', expires_at: 1000 }, 400, 'INVALID_EXPIRES_AT'],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', expires_at: 'soon' }, 400, 'INVALID_EXPIRES_AT'],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', title: 'x'.repeat(501) }, 400, 'INVALID_PARAMETER'],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', metadata: 'x'.repeat(10_001) }, 400, 'INVALID_PARAMETER'],
      [
        { content_base64: 'aGVsbG8', mime_type: 'text/plain', tags: Array.from({ length: 21 }, (_, i) => `${i}`) },
        400,
        'INVALID_PARAMETER',
      ],
      [{ content_base64: 'aGVsbG8', mime_type: 'text/plain', is_free: 'yes' }, 400, 'INVALID_PARAMETER'],
    ]
    for (const [body, status, code] of cases) {
      const reply = await post(body)
      if (reply.status !== status || reply.body.code !== code)
        throw new Error(`${JSON.stringify(body).slice(0, 120)} → ${reply.status} ${reply.text}`)
      expect(typeof reply.body.error).toBe('string')
    }
  })

  test(
    'content_base64 as any JSON encoder may write it: escaped slashes, \\u escapes, the field twice ' +
      '(the last wins), sent in small pieces',
    async () => {
      const bytes = new Uint8Array(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256)) // base64 with many '/' and '+'
      const text = Buffer.from(bytes).toString('base64')
      expect(text).toContain('/')
      const escaped = text.replaceAll('/', '\\/').replace('A', '\\u0041')
      const bodies = [
        `{"mime_type":"application/pdf","content_base64":"${escaped}"}`,
        `{"content_base64":"aGVsbG8=","mime_type":"application/pdf","content_base64":"${text}"}`,
        `{"content\\u005fbase64":"${text}","mime_type":"application/pdf"}`,
      ]
      for (const rawBody of bodies) {
        const reply = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, { wallet: owner, rawBody })
        expect(reply.status, rawBody.slice(0, 80)).toBe(201)
        const content = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${reply.body.id}/content`)
        expect(Buffer.from(await content.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
      }
      // A body that arrives in pieces cut inside escapes and quanta, over a stream (no Content-Length).
      const encoded = new TextEncoder().encode(bodies[0]!)
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < encoded.length; at += 7) controller.enqueue(encoded.slice(at, at + 7))
          controller.close()
        },
      })
      const headers = { ...(await authHeaders(server.url, owner)), 'content-type': 'application/json' }
      const streamed = await fetch(`${server.url}/v1/feeds/${feed.id}/entries`, { method: 'POST', headers, body: stream })
      expect(streamed.status).toBe(201)
      const entry = (await streamed.json()) as { cid: string }
      const first = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=5`)
      expect(first.body.data.filter((e: { cid: string }) => e.cid === entry.cid).length).toBe(4) // same bytes, same CID
      // A raw line break inside the string is not JSON; an unknown escape neither.
      for (const rawBody of [
        `{"mime_type":"text/plain","content_base64":"aGVs\nbG8="}`,
        `{"mime_type":"text/plain","content_base64":"aGVs\\qbG8="}`,
      ]) {
        const reply = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, { wallet: owner, rawBody })
        expect([reply.status, reply.body.code]).toEqual([400, 'INVALID_JSON'])
      }
    },
  )

  test('ownership and existence: 401, 403, 404, 400', async () => {
    expect(
      (await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, { body: { content_base64: 'aGVsbG8', mime_type: 'text/plain' } }))
        .status,
    ).toBe(401)
    const stranger = await post({ content_base64: 'aGVsbG8', mime_type: 'text/plain' }, newWallet())
    expect(stranger.status).toBe(403)
    expect(stranger.body.code).toBe('UNAUTHORIZED')
    const missing = await post({ content_base64: 'aGVsbG8', mime_type: 'text/plain' }, owner, '01900000-0000-7000-8000-000000000000')
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('FEED_NOT_FOUND')
    const malformed = await post({ content_base64: 'aGVsbG8', mime_type: 'text/plain' }, owner, 'nope')
    expect(malformed.status).toBe(400)
    expect(malformed.body.code).toBe('INVALID_PARAMETER')
  })

  test('a body over the 50 MB base64 limit → 413 PAYLOAD_TOO_LARGE, refused while reading', async () => {
    const headers = await authHeaders(server.url, owner)
    const limit = 50 * 1024 * 1024
    // Streamed without Content-Length, so the server must count while reading.
    const chunk = new TextEncoder().encode('A'.repeat(1024 * 1024))
    let sent = 0
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"mime_type":"text/plain","content_base64":"'))
      },
      pull(controller) {
        if (sent > limit + 2 * 1024 * 1024) return controller.close()
        sent += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const reply = await fetch(`${server.url}/v1/feeds/${feed.id}/entries`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(reply.status).toBe(413)
    expect((await reply.json()).code).toBe('PAYLOAD_TOO_LARGE')
    // A declared Content-Length over the limit is refused up front.
    const declared = await fetch(`${server.url}/v1/feeds/${feed.id}/entries`, {
      method: 'POST',
      headers: { ...(await authHeaders(server.url, owner)), 'content-type': 'application/json' },
      body: 'x'.repeat(limit + 300 * 1024),
    })
    expect(declared.status).toBe(413)
    // The server still works.
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).status).toBe(200)
  })

  test('content of exactly 50 MB of base64 text is accepted (and over it is 413)', async () => {
    const limit = 50 * 1024 * 1024
    const bytes = new Uint8Array((limit / 4) * 3) // base64 length = limit exactly
    const ok = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
      wallet: owner,
      body: { content_base64: b64(bytes), mime_type: 'video/mp4' },
    })
    expect(ok.status).toBe(201)
    const over = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
      wallet: owner,
      body: { content_base64: b64(new Uint8Array(bytes.byteLength + 3)), mime_type: 'video/mp4' },
    })
    expect(over.status).toBe(413)
    expect(over.body.code).toBe('PAYLOAD_TOO_LARGE')
    const ranged = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${ok.body.id}/content`, {
      headers: { range: `bytes=${bytes.byteLength - 10}-` },
    })
    expect(ranged.status).toBe(206)
    expect((await bytesOf(ranged)).byteLength).toBe(10)
  }, 120_000)
})

describe('mime_type is a whole media type, stored exactly as sent', () => {
  const post = (feedId: string, mime_type: unknown) =>
    call(server.url, 'POST', `/v1/feeds/${feedId}/entries`, { wallet: owner, body: { content_base64: b64('hello'), mime_type } })

  test('CR/LF, NUL, non-ASCII, over 100 chars, bad parameters, unsupported types → 400 UNSUPPORTED_MIME_TYPE, nothing stored', async () => {
    const target = await createFeed(server.url, owner, { name: 'mime refusals' })
    const refused = [
      'text/plain\r\nX-Injected: 1',
      'text/plain; charset=utf-8\n',
      'text/plain\r',
      'text/plain\u0000',
      'text/plain; p="a\u0000b"',
      'text/plaín',
      'text/plain; charset="utf-8✓"',
      `text/plain; p=${'x'.repeat(101 - 'text/plain; p='.length)}`,
      'text/plain;',
      'text/plain; charset',
      'text/plain; charset = utf-8',
      'text/plain; charset=utf 8',
      'text/plain; p="unterminated',
      'text/plain, text/html',
      ' text/plain',
      'text/plain ',
      'text/plain\t',
      'text',
      '',
      'application/octet-stream',
      'text/csv; charset=utf-8',
      'image/svg',
    ]
    for (const mime of refused) {
      const reply = await post(target.id, mime)
      try {
        expectError(reply, 400, 'UNSUPPORTED_MIME_TYPE')
      } catch (error) {
        throw new Error(`${JSON.stringify(mime)}: ${(error as Error).message}`)
      }
      expect(typeof reply.body.details).toBe('string')
      expect(reply.body.details).not.toMatch(/[\r\n]/)
    }
    expect((await post(target.id, 'application/octet-stream')).body.details).toBe('application/octet-stream is not a supported type')
    expect((await post(target.id, 'text/plain\r\nX-Injected: 1')).body.details).toBe(
      'mime_type must be a media type of at most 100 printable ASCII characters',
    )
    // Not a string at all: still the mime_type code.
    for (const mime of [42, null, ['text/plain'], { type: 'text/plain' }])
      expectError(await post(target.id, mime), 400, 'UNSUPPORTED_MIME_TYPE')
    const after = await call(server.url, 'GET', `/v1/feeds/${target.id}`)
    expect(after.body.total_entries).toBe(0)
    expect((await call(server.url, 'GET', `/v1/feeds/${target.id}/entries`)).body.data).toEqual([])
  })

  test('parameters and any letter case are accepted, echoed exactly and served as Content-Type', async () => {
    const target = await createFeed(server.url, owner, { name: 'mime spellings' })
    const accepted = [
      'text/plain; charset=utf-8',
      'Text/Plain',
      'TEXT/HTML; charset="utf-8"',
      'text/markdown;charset=utf-8;variant=GFM',
      'text/plain; p="a \\"quoted\\" value; with=separators"',
      `text/plain; p=${'x'.repeat(100 - 'text/plain; p='.length)}`,
    ]
    for (const mime_type of accepted) {
      const reply = await post(target.id, mime_type)
      if (reply.status !== 201) throw new Error(`${JSON.stringify(mime_type)} → ${reply.status} ${reply.text}`)
      expect(reply.body.mime_type).toBe(mime_type)
      const got = await call(server.url, 'GET', `/v1/feeds/${target.id}/entries/${reply.body.id}`)
      expect(got.body.mime_type).toBe(mime_type)
      for (const url of [`${server.url}/v1/feeds/${target.id}/entries/${reply.body.id}/content`, got.body.content_url]) {
        const content = await fetch(url)
        expect(content.status).toBe(200)
        expect(content.headers.get('content-type')).toBe(servedAs(mime_type))
        expect(content.headers.get('content-security-policy')).toBe(/^text\/html/i.test(mime_type) ? 'sandbox' : null)
        expect(await content.text()).toBe('hello')
      }
    }
    expect((await call(server.url, 'GET', `/v1/feeds/${target.id}`)).body.total_entries).toBe(accepted.length)
    // A paid entry with parameters: the 402 challenge names the type as stored.
    const paid = await createEntry(server.url, owner, target.id, {
      mime_type: 'text/plain; charset=utf-8',
      is_free: false,
      price: { amount: '10' },
    })
    const challenge = await call(server.url, 'GET', `/v1/feeds/${target.id}/entries/${paid.id}/content`)
    expect(challenge.status).toBe(402)
    expect(challenge.body.accepts[0].mimeType).toBe('text/plain; charset=utf-8')
  })
})

describe('rows stored before mime_type was checked', () => {
  let legacy: TestServer

  beforeAll(async () => {
    legacy = await startTestServer()
  })
  afterAll(() => legacy.dispose())

  test('a stored value that is not a media type never makes a read fail: its base type, else application/octet-stream', async () => {
    const target = await createFeed(legacy.url, owner, { name: 'legacy' })
    const rows: [string, string, string][] = [] // [entry id, stored value, expected Content-Type]
    const stored: [string, string][] = [
      ['text/plain\r\nX-Injected: 1', 'application/octet-stream'],
      ['text/plain; charset=utf-8\n', 'text/plain'],
      ['text/html\u0000', 'application/octet-stream'],
      ['text/plaín', 'application/octet-stream'],
    ]
    for (const [value, expected] of stored) rows.push([(await createEntry(legacy.url, owner, target.id)).id, value, expected])
    const paid = await createEntry(legacy.url, owner, target.id, { is_free: false, price: { amount: '10' } })
    // Write the values an older version accepted straight into the database, with the server stopped.
    await legacy.stop()
    await withRecords(legacy, async (db) => {
      // PostgreSQL's text holds no NUL character: no row there can have stored one.
      if (db.engine === 'postgres')
        rows.splice(
          rows.findIndex(([, value]) => value.includes('\u0000')),
          1,
        )
      for (const [id, value] of rows) await db.run('UPDATE entries SET mime_type = ? WHERE id = ?', [value, id])
      await db.run('UPDATE entries SET mime_type = ? WHERE id = ?', ['text/plain\r\nX-Injected: 1', paid.id])
    })
    await legacy.restart()

    for (const [id, value, expected] of rows) {
      const got = await call(legacy.url, 'GET', `/v1/feeds/${target.id}/entries/${id}`)
      expect(got.status).toBe(200)
      expect(got.body.mime_type).toBe(value) // the record still says what was stored
      for (const url of [`${legacy.url}/v1/feeds/${target.id}/entries/${id}/content`, got.body.content_url]) {
        const content = await fetch(url)
        expect(content.status).toBe(200)
        expect(content.headers.get('content-type')).toBe(servedAs(expected))
        expect(content.headers.get('x-injected')).toBeNull()
        expect(content.headers.get('content-security-policy')).toBe('sandbox')
        expect(content.headers.get('x-content-type-options')).toBe('nosniff')
        expect(await content.text()).toBe('hello')
      }
    }
    // The owner reads the paid one; everyone else gets a 402, not a 500.
    const asOwner = await fetch(`${legacy.url}/v1/feeds/${target.id}/entries/${paid.id}/content`, {
      headers: await authHeaders(legacy.url, owner),
    })
    expect(asOwner.status).toBe(200)
    expect(asOwner.headers.get('content-type')).toBe('application/octet-stream')
    expect((await call(legacy.url, 'GET', `/v1/feeds/${target.id}/entries/${paid.id}/content`)).status).toBe(402)
  })
})

describe('paid entries (before payments): owner only, others get the x402 challenge', () => {
  test('402 with a valid v1 body and the v2 header; owner reads; price is kept exactly', async () => {
    const paid = await createEntry(server.url, owner, feed.id, {
      content_base64: b64('secret'),
      title: 'Paid',
      is_free: false,
      price: { amount: '1500000', currency: 'USDC' },
    })
    expect(paid).toMatchObject({ is_free: false, price: '1500000', asset: 'USDC' })
    for (const path of [`/v1/feeds/${feed.id}/entries/${paid.id}`, `/v1/feeds/${feed.id}/entries/${paid.id}/content`]) {
      const reply = await call(server.url, 'GET', path)
      expect(reply.status).toBe(402)
      expect(reply.body.x402Version).toBe(1)
      expect(typeof reply.body.error).toBe('string')
      expect(reply.body.accepts).toHaveLength(1)
      expect(reply.body.accepts[0]).toEqual({
        scheme: 'exact',
        network: 'base-sepolia',
        maxAmountRequired: '1500000',
        resource: `${server.url}${path}`,
        description: 'Paid',
        mimeType: path.endsWith('/content') ? 'text/plain' : 'application/json',
        payTo: owner.address,
        maxTimeoutSeconds: expect.any(Number),
        asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        extra: { name: 'USDC', version: '2' },
      })
      expect(reply.body.accepts[0].maxTimeoutSeconds).toBeGreaterThanOrEqual(60)
      const v2 = JSON.parse(Buffer.from(reply.headers.get('payment-required')!, 'base64').toString())
      expect(v2).toMatchObject({
        x402Version: 2,
        resource: { url: `${server.url}${path}` },
        accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '1500000', payTo: owner.address }],
      })
    }
    const asOwner = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: owner })
    expect(asOwner.status).toBe(200)
    expect(asOwner.text).toBe('secret')
    const entryAsOwner = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}`, { wallet: owner })
    expect(entryAsOwner.status).toBe(200)
    expect((await fetch(entryAsOwner.body.content_url)).status).toBe(200)
    // A stranger's signature does not make them entitled.
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: newWallet() })).status).toBe(402)
    // Numbers are accepted as an integer amount; big amounts stay exact.
    const big = await createEntry(server.url, owner, feed.id, {
      is_free: false,
      price: { amount: '9007199254740993123', currency: 'USDC' },
    })
    expect(big.price).toBe('9007199254740993123')
    const numeric = await createEntry(server.url, owner, feed.id, { is_free: false, price: { amount: 250000 } })
    expect(numeric.price).toBe('250000')
  })

  test('a paid entry whose expires_at has passed is free', async () => {
    // An hour of early access, passed by the server's clock moved on, not by waiting: however slow the machine, the
    // entry is made and read paid before it ends, and read free after.
    const early = await createEntry(server.url, owner, feed.id, {
      is_free: false,
      price: { amount: '100' },
      expires_at: Math.floor(Date.now() / 1000) + 3600,
    })
    expect(early.is_free).toBe(false)
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${early.id}/content`)).status).toBe(402)
    await server.moveClock(3660)
    try {
      const later = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${early.id}`)
      expect(later.status).toBe(200)
      expect(later.body).toMatchObject({ is_free: true, price: '0' })
      // The content URL's 402 was served (and kept) by the hot path before the expiry; it must not outlive it.
      expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${early.id}/content`)).status).toBe(200)
    } finally {
      await server.moveClock(0)
    }
  })
})

describe('ranges, conditional requests, missing things', () => {
  test('Range → 206 with Content-Range; bad range → 416; If-None-Match → 304', async () => {
    const bytes = MIME_SAMPLES['audio/mpeg']
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'audio/mpeg' })
    const url = `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=262100-262200', 262100, 262200],
      ['bytes=599990-', 599990, 599999],
      ['bytes=-5', 599995, 599999],
      ['bytes=10-9999999', 10, 599999],
    ]
    for (const [range, start, end] of cases) {
      const reply = await fetch(url, { headers: { range } })
      expect(reply.status).toBe(206)
      expect(reply.headers.get('content-range')).toBe(`bytes ${start}-${end}/${bytes.byteLength}`)
      expect(reply.headers.get('content-length')).toBe(String(end - start + 1))
      expect(await bytesOf(reply)).toEqual(bytes.subarray(start, end + 1))
    }
    const bad = await fetch(url, { headers: { range: 'bytes=600000-' } })
    expect(bad.status).toBe(416)
    expect(bad.headers.get('content-range')).toBe(`bytes */${bytes.byteLength}`)
    const cached = await fetch(url, { headers: { 'if-none-match': `"${entry.cid}"` } })
    expect(cached.status).toBe(304)
    const head = await fetch(url, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(bytes.byteLength))
    expect(head.headers.get('content-type')).toBe('audio/mpeg')
  })

  test('unknown entry, entry of another feed, malformed ids', async () => {
    const other = await createFeed(server.url, owner, { name: 'other' })
    const entry = await createEntry(server.url, owner, feed.id)
    const wrongFeed = await call(server.url, 'GET', `/v1/feeds/${other.id}/entries/${entry.id}`)
    expect(wrongFeed.status).toBe(404)
    expect(wrongFeed.body.code).toBe('ENTRY_NOT_FOUND')
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/01900000-0000-7000-8000-000000000000/content`)).status).toBe(404)
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/zzz`)).body.code).toBe('INVALID_PARAMETER')
  })

  test('tampered or garbage access tokens → 403 INVALID_ACCESS_TOKEN', async () => {
    const entry = await createEntry(server.url, owner, feed.id)
    const { content_url } = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)).body
    const token: string = content_url.split('/v1/access/')[1]
    const [h, p, sig] = token.split('.')
    const tamperedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), eid: '01900000-0000-7000-8000-000000000000' }),
    ).toString('base64url')
    for (const bad of [`${h}.${tamperedPayload}.${sig}`, 'garbage', `${h}.${p}.${sig.slice(0, -2)}AA`]) {
      const reply = await call(server.url, 'GET', `/v1/access/${bad}`)
      expect(reply.status).toBe(403)
      expect(reply.body.code).toBe('INVALID_ACCESS_TOKEN')
    }
  })
})

describe('list and delete', () => {
  test('list: active only, newest first, is_free filter, cursor; delete: soft, owner only', async () => {
    const listFeed = await createFeed(server.url, owner, { name: 'list' })
    const made = []
    for (let i = 0; i < 5; i++) {
      made.push(await createEntry(server.url, owner, listFeed.id, i % 2 ? { is_free: false, price: { amount: '10' } } : {}))
    }
    const all = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries`)
    expect(all.body.data.map((e: any) => e.id)).toEqual([...made].reverse().map((e) => e.id))
    expect(all.body.data.every((e: any) => e.content_url === undefined)).toBe(true)
    const free = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries?is_free=true`)
    expect(free.body.data.map((e: any) => e.id)).toEqual([made[4].id, made[2].id, made[0].id])
    const paid = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries?is_free=false`)
    expect(paid.body.data.length).toBe(2)

    const first = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries?page_size=3`)
    expect(first.body.pagination.has_more).toBe(true)
    const second = await call(
      server.url,
      'GET',
      `/v1/feeds/${listFeed.id}/entries?page_size=3&page_token=${first.body.pagination.next_page_token}`,
    )
    expect(second.body.data.length).toBe(2)
    expect(second.body.pagination).toEqual({ page_size: 2, next_page_token: null, has_more: false })
    // A token of this feed's listing is foreign to another feed's listing.
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?page_token=${first.body.pagination.next_page_token}`)).status).toBe(
      422,
    )

    expect((await call(server.url, 'DELETE', `/v1/feeds/${listFeed.id}/entries/${made[0].id}`)).status).toBe(401)
    expect((await call(server.url, 'DELETE', `/v1/feeds/${listFeed.id}/entries/${made[0].id}`, { wallet: newWallet() })).status).toBe(403)
    expect(
      (await call(server.url, 'DELETE', `/v1/feeds/${listFeed.id}/entries/01900000-0000-7000-8000-000000000000`, { wallet: owner })).status,
    ).toBe(404)
    const del = await call(server.url, 'DELETE', `/v1/feeds/${listFeed.id}/entries/${made[0].id}`, { wallet: owner })
    expect(del.status).toBe(204)
    const after = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries`)
    expect(after.body.data.map((e: any) => e.id)).not.toContain(made[0].id)
    expect((await call(server.url, 'GET', `/v1/feeds/${listFeed.id}`)).body.total_entries).toBe(4)
    const record = await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries/${made[0].id}`)
    expect(record.status).toBe(200)
    expect(record.body.is_active).toBe(false)
    expect(record.body.content_url).toBeUndefined()
    expect((await call(server.url, 'GET', `/v1/feeds/${listFeed.id}/entries/${made[0].id}/content`)).status).toBe(404)
  })

  test('a feed holds at most 1000 active entries', async () => {
    const full = await createFeed(server.url, owner, { name: 'full' })
    const headers = await Promise.all(Array.from({ length: 1000 }, () => authHeaders(server.url, owner)))
    let created = 0
    for (let i = 0; i < headers.length; i += 50) {
      const replies = await Promise.all(
        headers.slice(i, i + 50).map((h, j) =>
          call(server.url, 'POST', `/v1/feeds/${full.id}/entries`, {
            headers: h,
            body: { content_base64: b64(`entry ${i + j}`), mime_type: 'text/plain' },
          }),
        ),
      )
      created += replies.filter((r) => r.status === 201).length
    }
    expect(created).toBe(1000)
    const over = await call(server.url, 'POST', `/v1/feeds/${full.id}/entries`, {
      wallet: owner,
      body: { content_base64: 'aGVsbG8', mime_type: 'text/plain' },
    })
    expect(over.status).toBe(403)
    expect(over.body.code).toBe('ENTRY_LIMIT_REACHED')
    expect((await call(server.url, 'GET', `/v1/feeds/${full.id}`)).body.total_entries).toBe(1000)
    // Counting what the listing returns gives the same number.
    let count = 0
    let token: string | null = null
    do {
      const page: any = await call(server.url, 'GET', `/v1/feeds/${full.id}/entries?page_size=100${token ? `&page_token=${token}` : ''}`)
      count += page.body.data.length
      token = page.body.pagination.next_page_token
    } while (token)
    expect(count).toBe(1000)
  }, 120_000)
})
