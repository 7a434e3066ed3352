// Strict base64 (src/domain/base64.ts) against the plain definition: a string is accepted exactly when it is the
// canonical base64 of its decoded bytes (padding optional), checked here by a full re-encode, on every short string
// over an alphabet of valid, padding, url-safe and whitespace characters.
import { describe, expect, test } from 'bun:test'
import { base64Decoder, decodeStrictBase64 } from '../src/domain/base64.ts'

function reference(text: string): Uint8Array | null {
  const unpadded = text.replace(/={1,2}$/, '')
  if (unpadded !== text && text.length % 4 !== 0) return null
  if (unpadded.length % 4 === 1) return null
  const bytes = Buffer.from(unpadded, 'base64')
  return bytes.toString('base64').replace(/=+$/, '') === unpadded ? bytes : null
}

describe('decodeStrictBase64', () => {
  test('agrees with a full re-encode on every string of up to 5 characters from a mixed alphabet', () => {
    const chars = 'AQB+/=-_ \n'
    let checked = 0
    const visit = (s: string) => {
      const want = reference(s)
      const got = decodeStrictBase64(s)
      expect(got === null, JSON.stringify(s)).toBe(want === null)
      if (want && got) expect(Buffer.from(got).equals(Buffer.from(want)), JSON.stringify(s)).toBe(true)
      checked++
      if (s.length < 5) for (const c of chars) visit(s + c)
    }
    visit('')
    expect(checked).toBe(111_111)
  })

  test('large input: decoded bytes are exact; one stray bit or character anywhere is refused', () => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 2)
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536))
    const text = Buffer.from(bytes).toString('base64')
    expect(Buffer.from(decodeStrictBase64(text)!).equals(Buffer.from(bytes))).toBe(true)
    expect(Buffer.from(decodeStrictBase64(text.replace(/=+$/, ''))!).equals(Buffer.from(bytes))).toBe(true)
    const middle = text.length >> 1
    for (const c of [' ', '-', '_', '=', '\n', 'é'])
      expect(decodeStrictBase64(text.slice(0, middle) + c + text.slice(middle + 1)), JSON.stringify(c)).toBeNull()
    const last = text.replace(/=+$/, '').length - 1 // the character that holds the stray bits
    expect(decodeStrictBase64(text.slice(0, last) + 'B' + text.slice(last + 1))).toBeNull()
  })

  test('decoded as it arrives, in any split, it agrees with the whole text', () => {
    const chars = 'AQB+/=-_ \n'
    const joined = (parts: string[]) => {
      const decoder = base64Decoder()
      for (const part of parts) decoder.push(part)
      const { pieces, size, chars } = decoder.end()
      expect(chars).toBe(parts.join('').length)
      return pieces ? Buffer.concat(pieces, size) : null
    }
    let checked = 0
    const visit = (s: string) => {
      const want = decodeStrictBase64(s)
      for (let a = 0; a <= s.length; a++) {
        for (let b = a; b <= s.length; b++) {
          const got = joined([s.slice(0, a), s.slice(a, b), s.slice(b)])
          expect(got === null, JSON.stringify([a, b, s])).toBe(want === null)
          if (want && got) expect(got.equals(Buffer.from(want))).toBe(true)
          checked++
        }
      }
      if (s.length < 5) for (const c of chars) visit(s + c)
    }
    visit('')
    expect(checked).toBeGreaterThan(1_000_000)
    // A large text in uneven pieces, as a network delivers it.
    const bytes = new Uint8Array(1024 * 1024 + 1)
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536))
    const text = Buffer.from(bytes).toString('base64')
    const parts: string[] = []
    for (let at = 0, step = 1; at < text.length; at += step, step = (step * 7 + 3) % 65_537) parts.push(text.slice(at, at + step))
    expect(joined(parts)!.equals(Buffer.from(bytes))).toBe(true)
  })
})
