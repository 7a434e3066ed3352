// JSON bodies (whatever Content-Type says: curl users forget it) read with a byte cap: a body over the limit is refused
// while streaming, never buffered whole.
import { DomainError } from '../domain/errors.ts'

export const DEFAULT_BODY_LIMIT = 1024 * 1024

export const bodyTooLarge = (limit: number) => new DomainError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`)

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readBytes(request, limit)
  return bytes && parseJsonBytes(bytes)
}

/** A body as UTF-8 text, under the same cap ('' when there is none). */
export async function readText(request: Request, limit: number): Promise<string> {
  const bytes = await readBytes(request, limit)
  return bytes ? new TextDecoder().decode(bytes) : ''
}

/** The body's bytes, refused past `limit` while they stream in; undefined when there are none. */
async function readBytes(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw bodyTooLarge(limit)
  // With a declared length the body is copied once into its final buffer (a 50 MB upload is not held twice). A
  // large declared length is allocated before its bytes arrive: routes with large limits read only after the
  // signature check, so each such allocation costs the sender a signed nonce.
  const expected = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null
  let buffer = expected !== null ? new Uint8Array(expected) : null
  const chunks: Uint8Array[] = []
  let total = 0
  if (request.body) {
    const reader = request.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (total + value.byteLength > limit) {
        await reader.cancel().catch(() => {})
        throw bodyTooLarge(limit)
      }
      if (buffer && total + value.byteLength <= buffer.byteLength) buffer.set(value, total)
      else {
        if (buffer) chunks.push(buffer.subarray(0, total)) // more than declared: fall back to collecting
        buffer = null
        chunks.push(value)
      }
      total += value.byteLength
    }
  }
  // A GET/DELETE with Content-Type: application/json and no body is normal for SDK clients.
  if (total === 0) return undefined
  return buffer ? buffer.subarray(0, total) : Buffer.concat(chunks, total)
}

export function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    throw new DomainError('INVALID_JSON', 'request body is not valid JSON')
  }
}

/** An Elysia parse hook for JSON routes with the given cap. */
export const jsonBody =
  (limit = DEFAULT_BODY_LIMIT) =>
  ({ request }: { request: Request }) =>
    readJson(request, limit)
