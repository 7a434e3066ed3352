// Streams of byte chunks (content read as it comes) gathered into one array where a caller needs it whole.

/** The first `length` bytes of a stream, in one array. */
export async function concatChunks(source: AsyncIterable<Uint8Array>, length: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(length)
  let offset = 0
  for await (const chunk of source) {
    out.set(chunk.subarray(0, length - offset), offset)
    offset += chunk.byteLength
    if (offset >= length) break
  }
  return out
}
