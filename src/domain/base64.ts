// Strict base64: the standard alphabet, padding optional but correct when present, no whitespace, no url-safe
// letters, no stray bits. The alphabet is checked by counting the decoded bytes (see decode) and, for the few
// characters kept between pieces, by a regex; the stray bits by a round trip of the last quantum only (the only one
// that can hold them), so a 50 MB upload costs no re-encoded copy.
const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Base64 text, decoded: its length in characters and its bytes in pieces (null when it is not strict base64; empty
 * when every piece was handed on as it was decoded).
 */
export interface Base64Content {
  chars: number
  pieces: Uint8Array[] | null
  size: number
}

/** The end of the text (at most the last quantum and what follows it): padding and stray bits are checked here. */
function decodeTail(tail: string): Uint8Array | null {
  const padding = tail.endsWith('==') ? 2 : tail.endsWith('=') ? 1 : 0
  const data = tail.length - padding
  if (padding > 0 && tail.length % 4 !== 0) return null
  if (data % 4 === 1) return null
  const bytes = Buffer.from(tail, 'base64')
  if (bytes.toString('base64').replace(/=+$/, '') !== tail.slice(0, data)) return null
  return bytes
}

/** Decoded bytes go into blocks of the content store's chunk size, so its importer takes them without a copy. */
export const DECODED_BLOCK_BYTES = 262_144

/**
 * Strict base64 decoded as it arrives, piece by piece, so a large upload is never held as text. It accepts exactly
 * what `decodeStrictBase64` accepts of the whole text. After the first invalid character it only counts.
 * `expectedChars` (at least the text's length, when known) sizes a small text's one block. With `handOn`, each block
 * is passed on as soon as it is full (the last at end()) instead of kept; whether the text was valid is known at end().
 */
export function base64Decoder(expectedChars?: number, handOn?: (block: Uint8Array) => void) {
  let pending = '' // text not decoded yet: less than a quantum, or the last quantum (it may hold stray bits)
  let blocks: Uint8Array[] | null = []
  let block: Buffer | null = null
  let used = 0
  let size = 0
  let chars = 0
  const firstBlock =
    expectedChars === undefined ? DECODED_BLOCK_BYTES : Math.max(3, Math.min(DECODED_BLOCK_BYTES, Math.ceil(expectedChars / 4) * 3))

  function room(): Buffer {
    if (block && used < block.length) return block
    if (block) handOn ? handOn(block) : blocks!.push(block)
    block = Buffer.allocUnsafe(block ? DECODED_BLOCK_BYTES : firstBlock)
    used = 0
    return block
  }
  function append(bytes: Uint8Array) {
    for (let at = 0; at < bytes.length; ) {
      const target = room()
      const n = Math.min(target.length - used, bytes.length - at)
      target.set(bytes.subarray(at, at + n), used)
      used += n
      at += n
    }
    size += bytes.length
  }
  /**
   * Whole quanta, decoded straight into the blocks; false when they were not all of the alphabet. The decoder skips
   * what is not base64 (or stops at "="), so 4n characters give 3n bytes only if every one is a base64 or base64url
   * letter: counting the bytes checks them, where a regex pass cost six times the decoding.
   */
  function decode(text: string): boolean {
    for (let at = 0; at < text.length; ) {
      const target = room()
      const quanta = Math.min(Math.floor((target.length - used) / 3), (text.length - at) / 4)
      if (quanta === 0) {
        // a quantum straddles two blocks
        const bytes = Buffer.from(text.slice(at, at + 4), 'base64')
        if (bytes.length !== 3) return false
        append(bytes)
        at += 4
        continue
      }
      const written = target.write(text.slice(at, at + quanta * 4), used, 'base64')
      if (written !== quanta * 3) return false
      used += written
      size += written
      at += quanta * 4
    }
    return true
  }

  return {
    /** Returns false once the text is known not to be strict base64. */
    push(text: string): boolean {
      chars += text.length
      if (!blocks) return false
      // The text is checked and decoded where it lies (no joined copy): only the few pending characters are joined.
      if (pending.endsWith('=')) {
        // padding so far: only more padding may follow
        pending += text
        if (ALPHABET.test(pending)) return true
        blocks = block = null
        return false
      }
      if (text.includes('-') || text.includes('_')) {
        // base64url letters: the decoder would take them
        blocks = block = null
        return false
      }
      const data = text.length - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0)
      const total = pending.length + data
      let whole = total - (total % 4)
      if (whole === total) whole -= 4 // keep the last quantum for end()
      if (whole <= pending.length) {
        // a few characters, kept for later: checked now, so a bad one is known at once
        if (!ALPHABET.test(text)) {
          blocks = block = null
          return false
        }
        pending += text
        return true
      }
      const fromText = whole - pending.length // characters of the text decoded now
      const head = (4 - (pending.length % 4)) % 4 // those completing the pending quantum
      const rest = text.slice(fromText)
      const valid =
        (pending.length === 0 || decode(pending + text.slice(0, head))) && decode(text.slice(pending.length > 0 ? head : 0, fromText))
      if (!valid || !ALPHABET.test(rest)) {
        // padding anywhere but at the very end fails here too
        blocks = block = null
        return false
      }
      pending = rest
      return true
    },
    end(): Base64Content {
      const tail = blocks ? decodeTail(pending) : null
      if (!blocks || !tail) return { chars, pieces: null, size: 0 }
      append(tail)
      const last = block && used > 0 ? block.subarray(0, used) : null
      if (handOn && last) handOn(last)
      const pieces = last && !handOn ? [...blocks, last] : blocks
      return { chars, pieces, size }
    },
  }
}

/** Content that came as bytes (a form's file part), as the JSON form would have carried it: 4 characters per 3 bytes. */
export const contentOfBytes = (pieces: Uint8Array[], size: number): Base64Content => ({ chars: Math.ceil(size / 3) * 4, pieces, size })

/** A whole base64 text, decoded (see base64Decoder). */
export function base64Content(text: string): Base64Content {
  const decoder = base64Decoder(text.length)
  decoder.push(text)
  return decoder.end()
}

export function decodeStrictBase64(text: string): Uint8Array | null {
  const { pieces, size } = base64Content(text)
  if (!pieces) return null
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, size)
}
