// The streaming multipart/form-data parser (src/lib/multipart.ts) against Bun's own Request.formData(): however a
// body is cut into chunks, the same parts; and hostile bodies (truncated anywhere, folded or broken headers, too many
// parts or too long headers, random damage) are refused with a MultipartError, never another exception.
import { describe, expect, test } from 'bun:test'
import { boundaryOf, MultipartError, multipartParser, type PartHead } from '../src/lib/multipart.ts'

const LIMITS = { headerBytes: 1024, parts: 16 }

interface Parsed {
  head: PartHead
  bytes: Buffer
}

/** Parses `body` pushed as the pieces `cuts` makes of it: the parts, or the error's class name and message. */
function parse(body: Uint8Array, boundary: string, cuts: number[] = [], limits = LIMITS): Parsed[] | string {
  const parts: Parsed[] = []
  let open: { head: PartHead; pieces: Buffer[] } | null = null
  try {
    const parser = multipartParser(
      boundary,
      {
        part: (head) => void (open = { head, pieces: [] }),
        data: (bytes) => void open!.pieces.push(Buffer.from(bytes)),
        partEnd: () => void (parts.push({ head: open!.head, bytes: Buffer.concat(open!.pieces) }), (open = null)),
      },
      limits,
    )
    let from = 0
    for (const cut of [...cuts, body.length]) parser.push(body.subarray(from, Math.max(from, cut))), (from = Math.max(from, cut))
    parser.end()
    return parts
  } catch (error) {
    if (!(error instanceof MultipartError)) throw error
    return `MultipartError: ${error.message}`
  }
}

/** A form as the WHATWG serializer writes it (Bun's Response), with its boundary. */
async function serialized(form: FormData): Promise<{ body: Uint8Array<ArrayBuffer>; boundary: string }> {
  const response = new Response(form)
  const boundary = boundaryOf(response.headers.get('content-type')!)!
  return { body: new Uint8Array(await response.arrayBuffer()), boundary }
}

/** What Bun's formData() makes of the body: the reference for well-formed ones. */
async function reference(body: Uint8Array<ArrayBuffer>, boundary: string) {
  const form = await new Response(body, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }).formData()
  const out: { name: string; filename: string | null; bytes: Buffer }[] = []
  for (const [name, value] of form as unknown as Iterable<[string, string | File]>)
    out.push(
      typeof value === 'string'
        ? { name, filename: null, bytes: Buffer.from(value) }
        : { name, filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) },
    )
  return out
}

const simplified = (parts: Parsed[] | string) =>
  typeof parts === 'string' ? parts : parts.map((p) => ({ name: p.head.name, filename: p.head.filename, bytes: p.bytes }))

const text = (s: string) => new TextEncoder().encode(s)

function sampleForm(): FormData {
  const form = new FormData()
  form.append('title', 'A title with "quotes", ünïcödé and a\r\nline break')
  form.append('tags', 'a')
  form.append('tags', 'b')
  // Content holding what a delimiter starts with, CRs and dashes at every place.
  const content = Buffer.concat([text('\r\n--\r\r\n-\r\n--x\r\n'), Buffer.alloc(300, 0x0d), text('end\r\n')])
  form.append('content', new Blob([content], { type: 'video/mp4' }), 'clip 1.mp4')
  form.append('empty', '')
  return form
}

describe('well-formed bodies', () => {
  test('every cut into two and three pieces gives the parts formData() gives', async () => {
    const { body, boundary } = await serialized(sampleForm())
    const expected = await reference(body, boundary)
    expect(expected.length).toBe(5)
    const whole = parse(body, boundary)
    expect(simplified(whole)).toEqual(expected)
    expect((whole as Parsed[])[3]!.head.type).toBe('video/mp4')
    for (let cut = 0; cut <= body.length; cut++) expect(simplified(parse(body, boundary, [cut]))).toEqual(expected)
    for (let a = 0; a <= body.length; a += 7)
      for (let b = a; b <= body.length; b += 13) expect(simplified(parse(body, boundary, [a, b]))).toEqual(expected)
  })

  test('byte by byte, and in random pieces', async () => {
    const { body, boundary } = await serialized(sampleForm())
    const expected = await reference(body, boundary)
    expect(
      simplified(
        parse(
          body,
          boundary,
          Array.from({ length: body.length }, (_, i) => i),
        ),
      ),
    ).toEqual(expected)
    for (let round = 0; round < 200; round++) {
      const cuts = Array.from({ length: 1 + (round % 9) }, () => Math.floor(Math.random() * body.length)).sort((x, y) => x - y)
      expect(simplified(parse(body, boundary, cuts))).toEqual(expected)
    }
  })

  test('a preamble, an epilogue, padding after a delimiter and a quoted boundary', () => {
    const body = text(
      'preamble --b\r\n\r\n--b  \r\nContent-Disposition: form-data; name="x"\r\n\r\nvalue\r\n--b\r\n' +
        'content-disposition: FORM-DATA; filename="f.txt"; name=y;\r\nX-Other: kept out\r\n\r\n\r\n--b--\r\nepilogue --b\r\n',
    )
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="b"')).toBe('b')
    expect(simplified(parse(body, 'b'))).toEqual([
      { name: 'x', filename: null, bytes: Buffer.from('value') },
      { name: 'y', filename: 'f.txt', bytes: Buffer.alloc(0) },
    ])
  })

  test('a large part is handed on in views of the chunks, not copied', () => {
    const content = new Uint8Array(1 << 20).fill(0x41)
    const body = Buffer.concat([text('--b\r\nContent-Disposition: form-data; name="c"; filename="c"\r\n\r\n'), content, text('\r\n--b--')])
    const seen: Uint8Array[] = []
    const parser = multipartParser('b', { part() {}, data: (bytes) => void seen.push(bytes), partEnd() {} }, LIMITS)
    parser.push(body)
    parser.end()
    expect(seen.length).toBe(1)
    expect(seen[0]!.buffer).toBe(body.buffer)
    expect(seen[0]!.byteLength).toBe(content.byteLength)
  })
})

describe('boundaryOf', () => {
  test.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['Multipart/Form-Data;boundary="a b"', 'a b'],
    ['multipart/form-data; BOUNDARY=----WebKitFormBoundaryoo6vortfDzBsDiro', '----WebKitFormBoundaryoo6vortfDzBsDiro'],
    ['multipart/form-data', null],
    ['multipart/form-data; boundary=', null],
    ['multipart/form-data; boundary="ends in a space "', null],
    [`multipart/form-data; boundary=${'x'.repeat(71)}`, null],
    ['multipart/form-data; boundary=a\rb', null],
    ['multipart/mixed; boundary=abc', null],
    ['application/json', null],
  ])('%p → %p', (type, boundary) => expect(boundaryOf(type)).toBe(boundary))
})

describe('hostile bodies: a MultipartError, nothing else', () => {
  const part = (headers: string, value = 'v') => `--b\r\n${headers}\r\n\r\n${value}\r\n`
  const disposition = 'Content-Disposition: form-data; name="x"'

  test.each([
    ['no closing delimiter', `${part(disposition)}`],
    ['nothing at all', ''],
    ['only a preamble', 'no boundary here'],
    ['a header line folded first (the dicer crash)', `${part(` ${disposition}`)}--b--`],
    ['a header without a colon', `${part(`${disposition}\r\nbroken`)}--b--`],
    ['a header name that is no token', `${part(`${disposition}\r\nbad name: x`)}--b--`],
    ['no Content-Disposition', `${part('Content-Type: text/plain')}--b--`],
    ['no headers', '--b\r\n\r\nvalue\r\n--b--'],
    ['a disposition that is not form-data', `${part('Content-Disposition: attachment; name="x"')}--b--`],
    ['a disposition without a name', `${part('Content-Disposition: form-data; filename="x"')}--b--`],
    ['a parameter twice', `${part('Content-Disposition: form-data; name="x"; name="y"')}--b--`],
    ['an unterminated quoted parameter', `${part('Content-Disposition: form-data; name="x')}--b--`],
    ['two Content-Type headers', `${part(`${disposition}\r\nContent-Type: a/b\r\nContent-Type: c/d`)}--b--`],
    ['more after a delimiter', `${part(disposition)}--bx\r\n--b--`],
    ['a single dash after a delimiter', `${part(disposition)}--b-\r\n`],
    ['a lone CR after a delimiter', `${part(disposition)}--b\rx`],
  ])('%s', (_, body) => {
    const result = parse(text(body), 'b')
    expect(typeof result).toBe('string')
    expect(result as string).toStartWith('MultipartError')
  })

  test('truncated at every byte: refused, and the parts before the cut are the only ones heard', async () => {
    const { body, boundary } = await serialized(sampleForm())
    // The closing delimiter's own "--" is the body's end: what may follow it (CRLF) is the epilogue.
    const closed = Buffer.from(body).lastIndexOf(`--${boundary}--`) + boundary.length + 4
    for (let end = 0; end < closed; end++) expect(typeof parse(body.subarray(0, end), boundary)).toBe('string')
    expect(simplified(parse(body.subarray(0, closed), boundary))).toEqual(await reference(body, boundary))
  })

  test('too many parts, and headers longer than the limit, even when sent a byte at a time', () => {
    const many = `${Array.from({ length: 17 }, () => part(disposition)).join('')}--b--`
    expect(parse(text(many), 'b')).toBe('MultipartError: more than 16 parts')
    const long = `${part(`${disposition}\r\nX-Pad: ${'p'.repeat(2000)}`)}--b--`
    expect(parse(text(long), 'b')).toStartWith("MultipartError: a part's headers are longer")
    const bytes = text(long)
    expect(
      parse(
        bytes,
        'b',
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
    ).toStartWith("MultipartError: a part's headers are longer")
    const endless = text(`--b\r\n${disposition}\r\n${'X: y\r\n'.repeat(1000)}`)
    expect(parse(endless, 'b')).toStartWith("MultipartError: a part's headers are longer")
  })

  test('a bad boundary is refused before any byte', () => {
    expect(() => multipartParser('bad\r\nboundary', { part() {}, data() {}, partEnd() {} }, LIMITS)).toThrow(MultipartError)
  })

  test('random damage to a good body: parts or a MultipartError, never another error', async () => {
    const { body, boundary } = await serialized(sampleForm())
    const alphabet = text('\r\n-";= abcb:')
    for (let round = 0; round < 2000; round++) {
      const damaged = Buffer.from(body)
      for (let n = 0; n < 1 + (round % 5); n++)
        damaged[Math.floor(Math.random() * damaged.length)] = alphabet[Math.floor(Math.random() * alphabet.length)]!
      const cuts = [Math.floor(Math.random() * damaged.length)]
      parse(damaged, boundary, cuts) // throws (failing the test) on anything but a MultipartError
    }
  })

  test("a handler's error comes out of push() as it was thrown", () => {
    const parser = multipartParser(
      'b',
      {
        part() {
          throw new RangeError('refused by the handler')
        },
        data() {},
        partEnd() {},
      },
      LIMITS,
    )
    expect(() => parser.push(text(part(disposition)))).toThrow(RangeError)
  })
})
