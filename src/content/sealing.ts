// Paid content is stored sealed: encrypted under a random key of its own, so its public CID (the CID of what is
// stored) is not a hash of its bytes and cannot confirm a guess of them. AES-256-CTR (node:crypto): the stored item
// has the length of the content, and any byte range is opened on its own, so Range requests still work.
//
// Each key seals exactly one item and is never reused, so the counter can start at zero: the counter block of byte
// `offset` is offset / 16, as a 128-bit big-endian integer (the counter OpenSSL increments).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const CIPHER = 'aes-256-ctr'
const BLOCK = 16

/** The key of one sealed item: 32 random bytes. */
export type ContentKey = Uint8Array

export const newContentKey = (): ContentKey => new Uint8Array(randomBytes(32))

/** The counter block where byte `offset` of the keystream lies. */
function counterAt(offset: number): Buffer {
  const iv = Buffer.alloc(BLOCK)
  iv.writeBigUInt64BE(BigInt(Math.floor(offset / BLOCK)), 8)
  return iv
}

/** Seals pieces in order: each call takes the next piece of the content and returns its sealed bytes (same length). */
export function sealer(key: ContentKey): (piece: Uint8Array) => Uint8Array {
  const cipher = createCipheriv(CIPHER, key, counterAt(0))
  return (piece) => cipher.update(piece)
}

/** Opens stored bytes that start at byte `offset` of a sealed item, as they come. */
export async function* opened(key: ContentKey, sealed: AsyncIterable<Uint8Array>, offset = 0): AsyncGenerator<Uint8Array> {
  const decipher = createDecipheriv(CIPHER, key, counterAt(offset))
  const within = offset % BLOCK
  if (within > 0) decipher.update(Buffer.alloc(within)) // moves the keystream to `offset` inside its block
  for await (const chunk of sealed) yield decipher.update(chunk)
}
