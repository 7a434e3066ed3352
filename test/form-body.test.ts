// A form's body read with its file part streamed (src/edge/form-body.ts): the limits and the file part's rules answer
// the documented codes, whatever the chunking; and formBody turns text parts into the JSON form's shape by the
// create-entry schema itself, so the schema refuses what a JSON body would have it refuse.
import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { formBody, readFormStreamingFile } from '../src/edge/form-body.ts'
import { DomainError } from '../src/domain/errors.ts'
import { CreateEntry } from '../src/models/entry.ts'

const LIMITS = { body: 64 * 1024, file: 4096, field: 100, fields: 300, parts: 8 }

function requestOf(body: Uint8Array, boundary = 'b', chunk = 7, headers: Record<string, string> = {}): Request {
  let at = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.length) return controller.close()
      controller.enqueue(body.slice(at, at + chunk))
      at += chunk
    },
  })
  return new Request('http://127.0.0.1/x', {
    method: 'POST',
    body: stream,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers },
    duplex: 'half',
  } as RequestInit)
}

const field = (name: string, value: string) => `--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
const file = (name: string, value: string, filename = 'f.bin', type = 'video/mp4') =>
  `--b\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n${value}\r\n`
const END = '--b--\r\n'

async function read(body: string, chunk = 7, headers: Record<string, string> = {}) {
  const pieces: Uint8Array[] = []
  try {
    const form = await readFormStreamingFile(requestOf(Buffer.from(body), 'b', chunk, headers), LIMITS, 'content', {
      sink: { push: (piece) => void pieces.push(piece) },
      fileCode: 'INVALID_BASE64',
    })
    return { form, content: Buffer.concat(pieces).toString() }
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    return { code: error.code, message: error.message, details: error.details }
  }
}

describe('readFormStreamingFile', () => {
  test('fields in order (repeated ones kept), the file streamed, at any chunk size', async () => {
    const body = field('title', 'T') + field('tags', 'a') + file('content', 'hello\r\n-\r\n--c') + field('tags', 'b') + END
    for (const chunk of [1, 2, 3, 5, 64, 1 << 16]) {
      const result = await read(body, chunk)
      expect(result.content).toBe('hello\r\n-\r\n--c')
      expect(result.form!.file).toEqual({ name: 'content', filename: 'f.bin', type: 'video/mp4', size: 13 })
      expect([...result.form!.fields]).toEqual([
        ['title', ['T']],
        ['tags', ['a', 'b']],
      ])
    }
  })

  test.each([
    ['a content part without a filename', field('content', 'x') + END, 'INVALID_BASE64'],
    ['two content parts', file('content', 'x') + file('content', 'y') + END, 'INVALID_BASE64'],
    ['another file part', file('content', 'x') + file('title', 'y') + END, 'INVALID_PARAMETER'],
    ['a truncated body', file('content', 'x'), 'INVALID_PARAMETER'],
    ['a broken part header', `--b\r\n Content-Disposition: form-data; name="x"\r\n\r\n\r\n${END}`, 'INVALID_PARAMETER'],
    ['a field over its limit', field('title', 'x'.repeat(101)) + END, 'PAYLOAD_TOO_LARGE'],
    ['fields over their limit together', field('a', 'x'.repeat(100)).repeat(4) + END, 'PAYLOAD_TOO_LARGE'],
    ['a file over its limit', file('content', 'x'.repeat(4097)) + END, 'PAYLOAD_TOO_LARGE'],
    ['too many parts', field('a', '').repeat(9) + END, 'INVALID_PARAMETER'],
  ])('%s', async (_, body, code) => {
    expect((await read(body)).code).toBe(code)
    expect((await read(body, 1 << 16)).code).toBe(code)
  })

  test('a body over its limit, declared or not; a Content-Type without a boundary', async () => {
    const big = file('content', 'x'.repeat(4000)) + END + 'epilogue'.repeat(10_000) // the epilogue counts too
    expect((await read(big)).code).toBe('PAYLOAD_TOO_LARGE')
    expect((await read(field('a', 'b') + END, 7, { 'content-length': String(LIMITS.body + 1) })).code).toBe('PAYLOAD_TOO_LARGE')
    const request = new Request('http://127.0.0.1/x', { method: 'POST', body: 'x', headers: { 'content-type': 'multipart/form-data' } })
    const refused = await readFormStreamingFile(request, LIMITS, 'content', { sink: { push() {} }, fileCode: 'X' }).catch((e) => e)
    expect(refused).toBeInstanceOf(DomainError)
    expect(refused.code).toBe('INVALID_PARAMETER')
  })

  test('a body whose stream fails midway (a client gone) is refused as unreadable', async () => {
    let sent = false
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new Error('connection reset'))
        controller.enqueue(Buffer.from(file('content', 'partial').slice(0, 60)))
        sent = true
      },
    })
    const request = new Request('http://127.0.0.1/x', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      duplex: 'half',
    } as RequestInit)
    const refused = await readFormStreamingFile(request, LIMITS, 'content', { sink: { push() {} }, fileCode: 'X' }).catch((e) => e)
    expect(refused.code).toBe('INVALID_PARAMETER')
  })
})

describe('formBody: the JSON form by the schema', () => {
  const body = (entries: [string, string[]][]) => formBody(CreateEntry, new Map(entries))
  const valid = (value: Record<string, unknown>) => Value.Check(CreateEntry, { content_base64: '', ...value })

  test('text stays text; booleans, integers, lists and a JSON price as JSON carries them', () => {
    const made = body([
      ['mime_type', ['text/plain']],
      ['title', ['true']],
      ['description', ['']],
      ['tags', ['a', '', 'b']],
      ['is_free', ['false']],
      ['price', ['{"amount":"1000000","currency":"USDC"}']],
      ['expires_at', ['4102444800']],
    ])
    expect(made).toEqual({
      mime_type: 'text/plain',
      title: 'true',
      description: '',
      tags: ['a', 'b'],
      is_free: false,
      price: { amount: '1000000', currency: 'USDC' },
      expires_at: 4102444800,
    })
    expect(valid(made)).toBe(true)
  })

  test('a price by its properties (an HTML form); empty boxes of non-text fields are no value', () => {
    const made = body([
      ['mime_type', ['text/plain']],
      ['price.amount', ['5']],
      ['price.currency', ['']],
      ['expires_at', ['']],
      ['is_free', ['']],
    ])
    expect(made).toEqual({ mime_type: 'text/plain', price: { amount: '5' } })
    expect(valid(made)).toBe(true)
    expect(() =>
      body([
        ['price', ['{}']],
        ['price.amount', ['5']],
      ]),
    ).toThrow(DomainError)
  })

  test('what the schema must refuse reaches it as sent: a field twice, a word for a boolean, bad JSON, a fraction', () => {
    expect(body([['title', ['a', 'b']]])).toEqual({ title: ['a', 'b'] })
    expect(body([['is_free', ['yes']]])).toEqual({ is_free: 'yes' })
    expect(body([['price', ['{amount']]])).toEqual({ price: '{amount' })
    expect(body([['expires_at', ['1.5']]])).toEqual({ expires_at: '1.5' })
    for (const made of [
      body([['title', ['a', 'b']]]),
      body([['is_free', ['yes']]]),
      body([['price', ['{amount']]]),
      body([['expires_at', ['1.5']]]),
    ])
      expect(valid({ mime_type: 'text/plain', ...made })).toBe(false)
    expect(body([['unknown', ['x']]])).toEqual({ unknown: 'x' }) // as a JSON body's unknown field
  })
})
