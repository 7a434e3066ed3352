import { describe, expect, test } from 'bun:test'
import { checkMediaType, isValidMediaType, mediaTypeBase, safeMediaType, MAX_MEDIA_TYPE_LENGTH } from '../src/domain/media-type.ts'
import { SUPPORTED_MIME_TYPES } from '../src/models/entry.ts'
import { serveContent } from '../src/routes/serve-content.ts'
import type { ContentStore } from '../src/content/store.ts'

const VALID = [
  'text/plain',
  'TEXT/PLAIN',
  'Text/Plain',
  'image/svg+xml',
  'text/plain;charset=utf-8',
  'text/plain; charset=utf-8',
  'text/plain ; charset=utf-8',
  'text/plain\t;\tcharset=utf-8',
  'text/plain;  charset=utf-8; format=flowed',
  'text/plain; charset="utf-8"',
  'text/plain; p=""',
  'text/plain; p="a b; c=d, e"',
  'text/plain; p="with \\"escaped\\" quotes and \\\\ backslash"',
  'text/plain; p="\\ "',
  "application/json; x!#$%&'*+-.^_`|~=Z9",
  `text/plain; p=${'x'.repeat(MAX_MEDIA_TYPE_LENGTH - 'text/plain; p='.length)}`, // exactly 100 characters
]

const INVALID: [string, string][] = [
  ['', 'empty'],
  ['text', 'no subtype'],
  ['text/', 'empty subtype'],
  ['/plain', 'empty type'],
  ['text/plain/x', 'two slashes'],
  ['text /plain', 'space before slash'],
  ['text/ plain', 'space after slash'],
  [' text/plain', 'leading space'],
  ['text/plain ', 'trailing space'],
  ['text/plain\t', 'trailing tab'],
  ['text/plain;', 'empty parameter'],
  ['text/plain; ', 'empty parameter with space'],
  ['text/plain;;charset=utf-8', 'double semicolon'],
  ['text/plain; charset', 'parameter without value'],
  ['text/plain; charset=', 'parameter with empty value'],
  ['text/plain; =utf-8', 'parameter without name'],
  ['text/plain; charset = utf-8', 'spaces around ='],
  ['text/plain; charset=utf 8', 'space inside a token value'],
  ['text/plain; charset=utf-8 ', 'trailing space after a parameter'],
  ['text/plain; p="unterminated', 'unterminated quoted string'],
  ['text/plain; p="a"b', 'text after the closing quote'],
  ['text/plain; p="a\\"', 'escaped closing quote leaves it unterminated'],
  ['text/plain; p="tab\there"', 'HTAB inside a quoted string'],
  ['text/plain; p="\\\t"', 'quoted-pair of HTAB'],
  ['text/plain; p=a"b"', 'quote inside a token'],
  ['text/plain; p=(x)', 'separators in a token'],
  ['text/plain; p=a,b', 'comma in a token'],
  ['text/plain, text/html', 'a list'],
  ['text/plain\r\nX-Injected: 1', 'CR LF'],
  ['text/plain; charset=utf-8\n', 'trailing LF'],
  ['text/plain\r', 'CR'],
  ['text/plain\u0000', 'NUL'],
  ['text/plain; p="a\u0000b"', 'NUL inside a quoted string'],
  ['text/plain\u007f', 'DEL'],
  ['text/plaín', 'non-ASCII letter'],
  ['text/plain; p="é"', 'non-ASCII inside a quoted string'],
  ['text/plain\u00a0', 'no-break space'],
  ['text/plain\u2028', 'line separator'],
  ['tëxt/plain', 'non-ASCII in the type'],
  [`text/plain; p=${'x'.repeat(MAX_MEDIA_TYPE_LENGTH - 'text/plain; p='.length + 1)}`, '101 characters'],
]

describe('media-type grammar', () => {
  test('valid media types', () => {
    for (const value of VALID) {
      if (!isValidMediaType(value)) throw new Error(`expected valid: ${JSON.stringify(value)}`)
    }
    expect(VALID.at(-1)!.length).toBe(100)
  })

  test('invalid media types', () => {
    for (const [value, why] of INVALID) {
      if (isValidMediaType(value)) throw new Error(`expected invalid (${why}): ${JSON.stringify(value)}`)
    }
    expect(isValidMediaType(undefined)).toBe(false)
    expect(isValidMediaType(42)).toBe(false)
    expect(isValidMediaType(null)).toBe(false)
  })

  test('the base type is the lower-cased type/subtype, without parameters', () => {
    expect(mediaTypeBase('Text/Plain; Charset="UTF-8"')).toBe('text/plain')
    expect(mediaTypeBase('IMAGE/SVG+XML')).toBe('image/svg+xml')
    expect(mediaTypeBase('text/plain\n')).toBeNull()
  })

  test('pathological input is answered quickly', () => {
    const started = performance.now()
    for (let i = 0; i < 1000; i++) {
      isValidMediaType(`a/b${'; a=b'.repeat(15)};`)
      isValidMediaType(`a/b; p="${'\\"'.repeat(40)}`)
      isValidMediaType('a/b' + ';'.repeat(97))
    }
    expect(performance.now() - started).toBeLessThan(1000)
  })
})

describe('checkMediaType: what create entry accepts', () => {
  test('supported base types with any spelling and valid parameters', () => {
    for (const value of [
      'text/plain',
      'Text/Plain',
      'TEXT/PLAIN',
      'text/plain; charset=utf-8',
      'text/html; charset="utf-8"',
      'IMAGE/SVG+XML',
      'application/pdf',
    ]) {
      const check = checkMediaType(value, SUPPORTED_MIME_TYPES)
      expect(check).toEqual({ ok: true, base: value.split(';')[0].toLowerCase() })
    }
  })

  test('each failure has a one-line reason', () => {
    const cases: [unknown, RegExp][] = [
      ['application/octet-stream', /^application\/octet-stream is not a supported type$/],
      ['Application/X-Whatever; a=b', /^application\/x-whatever is not a supported type$/],
      ['text/plain\r\nX-Injected: 1', /at most 100 printable ASCII characters/],
      ['text/plain\u0000', /at most 100 printable ASCII characters/],
      ['text/plaín', /at most 100 printable ASCII characters/],
      ['t'.repeat(50) + '/' + 'p'.repeat(50), /at most 100 printable ASCII characters/],
      ['text/plain;', /type\/subtype/],
      ['text/plain; p="x', /type\/subtype/],
      ['text/plain\t', /type\/subtype/],
      ['', /such as text\/plain/],
      [undefined, /such as text\/plain/],
    ]
    for (const [value, reason] of cases) {
      const check = checkMediaType(value, SUPPORTED_MIME_TYPES)
      if (check.ok) throw new Error(`expected a refusal: ${JSON.stringify(value)}`)
      expect(check.reason).toMatch(reason)
      expect(check.reason).not.toMatch(/[\r\n]/)
    }
  })
})

describe('safeMediaType: what a stored value may put in a header', () => {
  test('valid values pass unchanged; broken ones fall back to their base type, else application/octet-stream', () => {
    const cases: [unknown, string][] = [
      ['text/plain', 'text/plain'],
      ['Text/Plain; charset="utf-8"', 'Text/Plain; charset="utf-8"'],
      ['text/plain; charset=utf-8\n', 'text/plain'],
      ['text/html; p="unterminated', 'text/html'],
      [' text/plain ;', 'text/plain'],
      ['text/plain\r\nX-Injected: 1', 'application/octet-stream'],
      ['text/plain\u0000', 'application/octet-stream'],
      ['tëxt/plain; a=b', 'application/octet-stream'],
      ['', 'application/octet-stream'],
      ['x'.repeat(200), 'application/octet-stream'],
      [`${'t'.repeat(60)}/${'p'.repeat(60)}; a=b`, 'application/octet-stream'],
      [null, 'application/octet-stream'],
    ]
    for (const [stored, expected] of cases) {
      expect(safeMediaType(stored)).toBe(expected)
      expect(isValidMediaType(safeMediaType(stored))).toBe(true)
      // Whatever comes out is a legal header value.
      expect(() => new Headers({ 'content-type': safeMediaType(stored) })).not.toThrow()
    }
  })
})

describe('serveContent with a stored mime_type from before the check', () => {
  const bytes = new TextEncoder().encode('<html><script>alert(1)</script></html>')
  const store = {
    size: async () => bytes.byteLength,
    body: async () => bytes,
  } as unknown as ContentStore
  const serve = (mime_type: string) => serveContent(store, { cid: 'bafkqaaa', mime_type }, new Request('http://localhost/x'))

  test('answers 200 with a safe Content-Type, never throws', async () => {
    const cases: [string, string, string | null][] = [
      ['text/plain; charset=utf-8', 'text/plain; charset=utf-8', null],
      ['TEXT/HTML', 'TEXT/HTML; charset=utf-8', 'sandbox'],
      ['image/svg+xml; charset=utf-8', 'image/svg+xml; charset=utf-8', 'sandbox'],
      ['text/plain\r\nX-Injected: 1', 'application/octet-stream', 'sandbox'],
      ['text/html; charset=utf-8\n', 'text/html; charset=utf-8', 'sandbox'],
      ['text/html\u0000', 'application/octet-stream', 'sandbox'],
      ['text/plaín', 'application/octet-stream', 'sandbox'],
    ]
    for (const [stored, contentType, csp] of cases) {
      const response = await serve(stored)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe(contentType)
      expect(response.headers.get('x-injected')).toBeNull()
      expect(response.headers.get('content-security-policy')).toBe(csp)
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes)
    }
  })
})
