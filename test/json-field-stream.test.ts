// The entry body reader (src/edge/json-field-stream.ts) against JSON.parse: whatever way a body is cut into network
// chunks, it gives the same body (with the streamed field as "") and the same field text, and refuses exactly the
// bodies JSON.parse refuses.
import { describe, expect, test } from 'bun:test'
import { readJsonStreamingField } from '../src/edge/json-field-stream.ts'
import { base64Decoder } from '../src/domain/base64.ts'
import { DomainError } from '../src/domain/errors.ts'

const FIELD = 'content_base64'

function requestOf(chunks: Uint8Array[], contentLength?: number): Request {
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift()
      if (next) controller.enqueue(next)
      else controller.close()
    },
  })
  const headers = contentLength === undefined ? {} : { 'content-length': String(contentLength) }
  return new Request('http://127.0.0.1/x', { method: 'POST', body, headers, duplex: 'half' } as RequestInit)
}

async function read(text: string, cuts: number[], limit = 1 << 20) {
  const bytes = new TextEncoder().encode(text)
  const chunks: Uint8Array[] = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) chunks.push(bytes.slice(from, Math.max(from, cut))), (from = Math.max(from, cut))
  const decoder = base64Decoder()
  let pushed = ''
  let ended = 0
  const sink = { push: (t: string) => ((pushed += t), decoder.push(t)), end: () => void ended++ }
  try {
    const result = await readJsonStreamingField(requestOf(chunks.filter((c) => c.length > 0)), limit, FIELD, sink)
    return { ...result, pushed, ended }
  } catch (error) {
    return { error: error instanceof DomainError ? error.code : String(error), pushed, ended }
  }
}

function parsed(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Checks one body under the given cuts against JSON.parse. */
async function agrees(text: string, cuts: number[]) {
  const want = parsed(text)
  const got = await read(text, cuts)
  const where = JSON.stringify({ text: text.slice(0, 200), cuts })
  if (!want.ok) {
    expect(got.error, where).toBe('INVALID_JSON')
    return got
  }
  expect(got.error, where).toBeUndefined()
  if (!('body' in got)) throw new Error('unreachable')
  const value = want.value as Record<string, unknown>
  if (got.streamed) {
    expect(got.body, where).toEqual({ ...value, [FIELD]: '' })
    expect(got.pushed, where).toBe(value[FIELD] as string)
    expect(got.ended, where).toBe(1)
  } else expect(got.body, where).toEqual(want.value)
  return got
}

const CASES: [string, boolean | 'error'][] = [
  ['{"content_base64":"aGVsbG8=","mime_type":"text/plain"}', true],
  ['{ "mime_type" : "text/plain" , "content_base64" : "aGVsbG8" }', true],
  ['{"title":"a \\"content_base64\\": \\"x\\"","content_base64":"QUJD"}', true],
  ['{"content_base64":"QU\\/D\\u0041"}', true], // escapes JSON allows inside the value
  ['{"content_base64":"QU\\nD"}', true],
  ['{"content\\u005fbase64":"QUJD"}', false], // the name with an escape: parsed whole instead
  ['{"content_base64":"QUJD","content_base64":"REVG"}', false], // twice: the last one wins, as in JSON.parse
  ['{"meta":{"content_base64":"QUJD"},"content_base64":"REVG"}', true],
  ['{"content_base64":12}', false],
  ['{"content_base64":null}', false],
  ['{"list":["content_base64",":"],"content_base64":""}', true],
  ['[{"content_base64":"QUJD"}]', false],
  ['"content_base64"', false],
  ['{}', false],
  ['{"content_base64":"QU\nJD"}', 'error'], // a raw newline in a string
  ['{"content_base64":"QU\\xJD"}', 'error'], // no such escape
  ['{"content_base64":"QU\\u00GJ"}', 'error'],
  ['{"content_base64":"QUJD', 'error'], // unterminated
  ['{"content_base64":"QUJD"', 'error'],
  ['{"content_base64":"QUJD"}x', 'error'],
  ['{"x":"content_base64":"QUJD"}', 'error'],
  ['{"content_base64" "QUJD"}', 'error'],
  ['{"content_base64":"é"}', true], // not base64, but valid JSON: the route answers INVALID_BASE64
]

describe('readJsonStreamingField', () => {
  test('every case, cut at every byte, matches JSON.parse', async () => {
    for (const [text, expected] of CASES) {
      const whole = await agrees(text, [])
      if (expected === 'error') expect(whole.error, text).toBe('INVALID_JSON')
      else expect('streamed' in whole && whole.streamed, text).toBe(expected)
      const length = new TextEncoder().encode(text).length
      for (let cut = 1; cut < length; cut++) await agrees(text, [cut])
      for (let cut = 1; cut + 2 < length; cut++) await agrees(text, [cut, cut + 1, cut + 2]) // one-byte chunks
    }
  })

  test('random bodies in random chunks match JSON.parse', async () => {
    let seed = 7
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    const pieces = ['A', 'b', '9', '+', '/', '=', '\\/', '\\u0041', '\\n', '\\"', '"', '\\', ' ', '\n', '{', '}', ':', ',', 'é']
    for (let round = 0; round < 3000; round++) {
      let value = ''
      for (let i = random(12); i > 0; i--) value += pieces[random(pieces.length)]
      const before = random(3) === 0 ? '"title":"x",' : ''
      const after = random(3) === 0 ? ',"tags":["content_base64"]' : ''
      const text = `{${before}"content_base64":"${value}"${after}}`
      const length = new TextEncoder().encode(text).length
      const cuts = [random(length), random(length), random(length)].sort((a, b) => a - b)
      await agrees(text, cuts)
    }
  })

  test('a body over the limit is refused, declared or not', async () => {
    const text = `{"content_base64":"${'A'.repeat(2000)}"}`
    expect((await read(text, [100, 900], 1000)).error).toBe('PAYLOAD_TOO_LARGE')
    const bytes = new TextEncoder().encode(text)
    const declared = requestOf([bytes], bytes.length)
    await expect(readJsonStreamingField(declared, 1000, FIELD, { push: () => true, end: () => {} })).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    })
  })

  test('an empty body is no body', async () => {
    const got = await read('', [])
    expect(got).toMatchObject({ body: undefined, streamed: false })
  })
})
