// JSON bodies (whatever Content-Type says: curl users forget it) read with a byte cap: a body over the limit is refused while streaming, never buffered whole.
import { DomainError } from '../domain/errors.ts'

export const DEFAULT_BODY_LIMIT = 1024 * 1024

const tooLarge = (limit: number) => new DomainError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`)

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const chunks: Uint8Array[] = []
  let total = 0
  if (request.body) {
    const reader = request.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > limit) {
        await reader.cancel().catch(() => {})
        throw tooLarge(limit)
      }
      chunks.push(value)
    }
  }
  // A GET/DELETE with Content-Type: application/json and no body is normal for SDK clients.
  if (total === 0) return undefined
  try {
    return JSON.parse(Buffer.concat(chunks, total).toString('utf8'))
  } catch {
    throw new DomainError('INVALID_JSON', 'request body is not valid JSON')
  }
}

/** An Elysia parse hook for JSON routes with the given cap. */
export const jsonBody = (limit = DEFAULT_BODY_LIMIT) => ({ request }: { request: Request }) => readJson(request, limit)
