// Strict base64: the standard alphabet, padding optional but correct when present, no whitespace, no url-safe
// letters, no stray bits. Checked by a decode/re-encode round trip (linear; a regex over 50 MB is not).
export function decodeStrictBase64(text: string): Uint8Array | null {
  const unpadded = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text
  if (unpadded !== text && text.length % 4 !== 0) return null
  if (unpadded.length % 4 === 1) return null
  const bytes = Buffer.from(unpadded, 'base64')
  const canonical = bytes.toString('base64')
  const canonicalUnpadded = canonical.endsWith('==') ? canonical.slice(0, -2) : canonical.endsWith('=') ? canonical.slice(0, -1) : canonical
  return canonicalUnpadded === unpadded ? bytes : null
}
