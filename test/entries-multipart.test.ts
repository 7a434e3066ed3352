// Entries uploaded as multipart/form-data (a browser form, `curl -F content=@file`): the same entry as the JSON form
// of the same bytes and fields, the same answers to the same mistakes, and hostile forms (truncated, a content part
// missing, twice or without a filename, an oversized field, a client gone midway) answered with the documented
// statuses, leaving no entry and nothing in the store. A 37.5 MiB form is written to a file as it arrives: RSS grows
// as little as for the JSON form.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Reply, type Wallet } from '../dev/api.ts'
import { MAX_CONTENT_BYTES } from '../src/models/entry.ts'

let server: TestServer
let owner: Wallet
let feedId: string
const entries = () => `/v1/feeds/${feedId}/entries`

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feedId = (await createFeed(server.url, owner)).id
})
afterAll(async () => {
  await server?.dispose()
})

const random = (size: number) => {
  const bytes = new Uint8Array(size)
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65_536)))
  return bytes
}
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

async function reply(response: Response): Promise<Reply> {
  const text = await response.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, body, text }
}

/** POSTs a body (a FormData: fetch writes it, boundary and length; or raw bytes with their Content-Type) signed by `wallet`. */
async function post(body: FormData | Uint8Array<ArrayBuffer> | string, options: { wallet?: Wallet | null; type?: string } = {}) {
  const headers: Record<string, string> = options.type ? { 'content-type': options.type } : {}
  if (options.wallet !== null) Object.assign(headers, await authHeaders(server.url, options.wallet ?? owner))
  return reply(await fetch(`${server.url}${entries()}`, { method: 'POST', headers, body }))
}

/** A form of `fields` (a list repeats its part) with `content` as its file part, when given. */
function form(fields: Record<string, string | string[]>, content?: { bytes: Uint8Array<ArrayBuffer>; type?: string; name?: string }) {
  const f = new FormData()
  if (content) f.append('content', new Blob([content.bytes], content.type ? { type: content.type } : {}), content.name ?? 'upload.bin')
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) f.append(name, v)
  return f
}

/** A form written out by hand, for what FormData will not write. */
const BOUNDARY = 'trellis-test-boundary'
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`
const part = (headers: string, value: string | Uint8Array) =>
  Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n')])
const field = (name: string, value: string) => part(`Content-Disposition: form-data; name="${name}"`, value)
const file = (value: string | Uint8Array, type = 'text/plain', name = 'content') =>
  part(`Content-Disposition: form-data; name="${name}"; filename="f"\r\nContent-Type: ${type}`, value)
const closed = (...parts: Buffer[]) => new Uint8Array(Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]))

/** An entry without what differs between two uploads of the same thing. */
const same = ({ id, created_at, updated_at, ...rest }: Record<string, unknown>) => rest
const entryCount = async () => (await call(server.url, 'GET', `${entries()}?page_size=100`)).body.data.length
async function contentOf(entryId: string): Promise<Uint8Array> {
  const response = await fetch(`${server.url}${entries()}/${entryId}/content`, { headers: await authHeaders(server.url, owner) })
  expect(response.status).toBe(200)
  return new Uint8Array(await response.arrayBuffer())
}

/** Nothing of refused uploads is left: no file waiting, no block that no entry names (gc, asked of the server). */
async function expectNothingLeft() {
  expect(readdirSync(join(server.dataDir, 'cache', 'uploads'))).toEqual([])
  const dry = await trellis(['gc', '--dry-run'], server.dataDir)
  expect(dry.code).toBe(0)
  expect(dry.json).toMatchObject({ removed: 0, dry_run: true })
}

describe('a form and a JSON body', () => {
  test('the same bytes and fields make the same entry: CID, size, media type, words, tags, price', async () => {
    const bytes = random(100_000)
    const words = { title: 'Clip', description: 'A clip', metadata: '{"k":1}' }
    const json = await createEntry(server.url, owner, feedId, {
      content_base64: b64(bytes),
      mime_type: 'video/mp4',
      ...words,
      tags: ['a', 'b'],
    })
    const made = await post(form({ ...words, tags: ['a', 'b'] }, { bytes, type: 'video/mp4', name: 'clip.mp4' }))
    expect(made.status).toBe(201)
    expect(same(made.body)).toEqual(same(json))
    expect(made.body.cid).toBe(json.cid)
    expect(await contentOf(made.body.id)).toEqual(bytes)

    // Paid (sealed: each upload has a CID of its own), its price as JSON text or by its properties, mime_type as a field.
    const expires_at = Math.floor(Date.now() / 1000) + 86_400
    const paid = { mime_type: 'application/pdf', is_free: false, price: { amount: '1000000' }, expires_at }
    const paidJson = await createEntry(server.url, owner, feedId, { content_base64: b64(bytes), ...paid })
    const fields = { mime_type: 'application/pdf', is_free: 'false', expires_at: String(expires_at) }
    const prices: Record<string, string>[] = [{ price: '{"amount":"1000000"}' }, { 'price.amount': '1000000', 'price.currency': 'USDC' }]
    for (const price of prices) {
      const paidForm = await post(form({ ...fields, ...price }, { bytes, type: 'application/octet-stream' }))
      expect(paidForm.status).toBe(201)
      expect({ ...same(paidForm.body), cid: null }).toEqual({ ...same(paidJson), cid: null })
      expect(await contentOf(paidForm.body.id)).toEqual(bytes)
    }
  })

  test('a form sent without a length (chunked, as it is written) is written to a file as it arrives: the same entry', async () => {
    const bytes = random(5 * 1024 * 1024 + 7)
    const body = closed(field('title', 'Chunked'), file(bytes, 'video/mp4'))
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < body.length; at += 1024 * 1024) controller.enqueue(body.slice(at, at + 1024 * 1024))
        controller.close()
      },
    })
    const response = await fetch(`${server.url}${entries()}`, {
      method: 'POST',
      headers: { 'content-type': TYPE, ...(await authHeaders(server.url, owner)) },
      body: stream,
    })
    const made = await reply(response)
    expect(made.status).toBe(201)
    const json = await createEntry(server.url, owner, feedId, { content_base64: b64(bytes), mime_type: 'video/mp4', title: 'Chunked' })
    expect(same(made.body)).toEqual(same(json))
    expect(readdirSync(join(server.dataDir, 'cache', 'uploads'))).toEqual([])
  })

  test('curl -F content=@file, its media type guessed by curl from the name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-curl-'))
    try {
      const path = join(dir, 'note.txt')
      writeFileSync(path, 'Plain text from curl\n')
      const auth = Object.entries(await authHeaders(server.url, owner)).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
      const run = Bun.spawnSync(
        [
          'curl',
          '-sS',
          '-w',
          '\n%{http_code}',
          ...auth,
          '-F',
          `content=@${path}`,
          '-F',
          'title=From curl',
          '-F',
          'tags=x',
          '-F',
          'tags=y',
        ].concat(`${server.url}${entries()}`),
        { stdout: 'pipe', stderr: 'pipe' },
      )
      const [text, status] = run.stdout.toString().split(/\n(?=\d{3}$)/)
      expect(status).toBe('201')
      const made = JSON.parse(text!)
      const json = await createEntry(server.url, owner, feedId, {
        content_base64: b64('Plain text from curl\n'),
        mime_type: 'text/plain',
        title: 'From curl',
        tags: ['x', 'y'],
      })
      expect(same(made)).toEqual(same(json))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('mistakes and hostile forms: the documented answers, no entry, nothing left', () => {
  test('a mistake in a field is answered as the JSON form answers it, to the byte', async () => {
    const content = new TextEncoder().encode('hello')
    const cases: [Record<string, unknown>, Record<string, string | string[]>, number, string][] = [
      [{ mime_type: 'application/x-unknown' }, { mime_type: 'application/x-unknown' }, 400, 'UNSUPPORTED_MIME_TYPE'],
      [{ mime_type: 'text/plain', title: 'x'.repeat(501) }, { title: 'x'.repeat(501) }, 400, 'INVALID_PARAMETER'],
      [
        { mime_type: 'text/plain', is_free: false, price: { amount: '1.5' } },
        { is_free: 'false', price: '{"amount":"1.5"}' },
        400,
        'INVALID_PRICE',
      ],
      [{ mime_type: 'text/plain', expires_at: 1 }, { expires_at: '1' }, 400, 'INVALID_EXPIRES_AT'],
      [{ mime_type: 'text/plain', tags: Array(21).fill('t') }, { tags: Array(21).fill('t') }, 400, 'INVALID_PARAMETER'],
    ]
    const count = await entryCount()
    for (const [json, fields, status, code] of cases) {
      const byJson = await call(server.url, 'POST', entries(), { wallet: owner, body: { content_base64: b64(content), ...json } })
      const byForm = await post(form(fields, { bytes: content, type: 'text/plain' }))
      expectError(byJson, status, code)
      expect(byForm.text).toBe(byJson.text)
      expect(byForm.status).toBe(byJson.status)
    }
    expect(await entryCount()).toBe(count)
  })

  test('the form itself broken or refused: 400, 401, 403, 413 and 415', async () => {
    const count = await entryCount()
    const text = (s: string) => new TextEncoder().encode(s)
    const cases: [string, () => Promise<Reply>, number, string][] = [
      ['truncated', () => post(Buffer.concat([field('title', 't'), file('abc')]), { type: TYPE }), 400, 'INVALID_PARAMETER'],
      ['no content part', () => post(closed(field('mime_type', 'text/plain')), { type: TYPE }), 400, 'INVALID_BASE64'],
      ['two content parts', () => post(closed(file('a'), file('b')), { type: TYPE }), 400, 'INVALID_BASE64'],
      ['content without a filename', () => post(closed(field('content', 'abc')), { type: TYPE }), 400, 'INVALID_BASE64'],
      ['another file part', () => post(closed(file('a'), file('b', 'text/plain', 'title')), { type: TYPE }), 400, 'INVALID_PARAMETER'],
      [
        'content_base64 in a form',
        () => post(closed(file('a'), field('content_base64', 'YQ==')), { type: TYPE }),
        400,
        'INVALID_PARAMETER',
      ],
      ['an empty file', () => post(form({}, { bytes: new Uint8Array(), type: 'text/plain' })), 400, 'INVALID_BASE64'],
      [
        'no media type anywhere',
        () => post(closed(part('Content-Disposition: form-data; name="content"; filename="f"', 'a')), { type: TYPE }),
        400,
        'UNSUPPORTED_MIME_TYPE',
      ],
      [
        'a folded first header',
        () => post(closed(part(' Content-Disposition: form-data; name="x"', 'a')), { type: TYPE }),
        400,
        'INVALID_PARAMETER',
      ],
      ['no boundary', () => post(closed(file('a')), { type: 'multipart/form-data' }), 400, 'INVALID_PARAMETER'],
      [
        'an oversized field',
        () => post(closed(file('a'), field('title', 'x'.repeat(100 * 1024))), { type: TYPE }),
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      ['multipart/mixed', () => post(closed(file('a')), { type: `multipart/mixed; boundary=${BOUNDARY}` }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['not signed', () => post(form({}, { bytes: text('a'), type: 'text/plain' }), { wallet: null }), 401, 'AUTH_REQUIRED'],
      [
        "another wallet's feed",
        () => post(form({}, { bytes: text('a'), type: 'text/plain' }), { wallet: newWallet() }),
        403,
        'UNAUTHORIZED',
      ],
    ]
    for (const [name, send, status, code] of cases) {
      const answer = await send()
      expect({ name, status: answer.status, code: answer.body?.code }).toEqual({ name, status, code })
      expectError(answer, status, code)
    }
    expect(await entryCount()).toBe(count)
    await expectNothingLeft()
  })

  test('large forms (written to a file as they arrive) refused after their content: nothing left', async () => {
    const count = await entryCount()
    const big = random(5 * 1024 * 1024)
    const cases: [Uint8Array<ArrayBuffer>, number, string][] = [
      [Buffer.concat([file(big, 'video/mp4'), field('title', 't')]), 400, 'INVALID_PARAMETER'], // truncated
      [closed(file(big, 'video/mp4'), file('again', 'video/mp4')), 400, 'INVALID_BASE64'],
      [closed(file(big, 'video/mp4'), field('is_free', 'false'), field('price', '{"amount":"-1"}')), 400, 'INVALID_PRICE'],
      [closed(file(big, 'video/mp4'), field('title', 'x'.repeat(600))), 400, 'INVALID_PARAMETER'],
      [closed(file(big, 'application/x-unknown')), 400, 'UNSUPPORTED_MIME_TYPE'],
    ]
    for (const [body, status, code] of cases) expectError(await post(body, { type: TYPE }), status, code)
    expectError(await post(closed(file(big, 'video/mp4')), { type: TYPE, wallet: newWallet() }), 403, 'UNAUTHORIZED')
    expect(await entryCount()).toBe(count)
    await expectNothingLeft()
  })

  test('a client that goes away halfway: no entry, no hang, nothing left; the same upload then succeeds', async () => {
    const count = await entryCount()
    const body = closed(field('title', 'Half'), file(random(6 * 1024 * 1024), 'video/mp4'))
    const headers = {
      host: '127.0.0.1',
      'content-type': TYPE,
      'content-length': String(body.length),
      ...(await authHeaders(server.url, owner)),
    }
    const head = `POST ${entries()} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(head)
        socket.write(body.subarray(0, body.length / 2), () => setTimeout(() => (socket.destroy(), resolve()), 300))
      })
      socket.on('error', reject)
    })
    await Bun.sleep(300)
    expect((await call(server.url, 'GET', '/health')).status).toBe(200)
    expect(await entryCount()).toBe(count)
    await expectNothingLeft()
    expect((await post(body, { type: TYPE })).status).toBe(201)
    expect(await entryCount()).toBe(count + 1)
  })
})

describe('a 37.5 MiB form', () => {
  test('the largest content the JSON form carries: RSS grows by less than twice it, the same CID; a byte more is 413', async () => {
    // As content-large.test.ts measures the JSON form: on a server that took one such upload already (the first
    // grows the heap of either form by more than twice the payload), of bytes nothing stored holds yet.
    await createEntry(server.url, owner, feedId, { content_base64: b64(random(MAX_CONTENT_BYTES)), mime_type: 'video/mp4' })
    const bytes = random(MAX_CONTENT_BYTES)
    const before = rss(server.pid)
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rss(server.pid))), 20)
    let made: Reply
    try {
      made = await post(form({ title: 'Large' }, { bytes, type: 'video/mp4' }))
    } finally {
      clearInterval(sampler)
    }
    const growth = Math.max(peak, rss(server.pid)) - before
    console.log(`37.5 MiB form: RSS +${(growth / 2 ** 20).toFixed(0)} MiB (${(growth / bytes.length).toFixed(2)} x the payload)`)
    expect(made.status).toBe(201)
    expect(growth).toBeLessThan(2 * bytes.length)
    const json = await createEntry(server.url, owner, feedId, { content_base64: b64(bytes), mime_type: 'video/mp4', title: 'Large' })
    expect(same(made.body)).toEqual(same(json))

    const count = await entryCount()
    const over = await post(form({}, { bytes: random(MAX_CONTENT_BYTES + 1), type: 'video/mp4' }))
    expectError(over, 413, 'PAYLOAD_TOO_LARGE')
    expect(await entryCount()).toBe(count)
    await expectNothingLeft()
  })
})
