// Strict base64: the standard alphabet, padding optional, nothing else (no whitespace, no url-safe letters).
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/

export function decodeStrictBase64(text: string): Uint8Array | null {
  if (!STRICT.test(text)) return null
  return Buffer.from(text, 'base64')
}
