// Serving an entry's bytes: type, length, ETag = CID, single byte ranges (206/416), and headers that keep
// uploaded pages from running script on our origin.
import type { ContentStore } from '../content/helia.ts'
import type { EntryRow } from '../store/entries.ts'
import { mediaTypeBase, safeMediaType } from '../domain/media-type.ts'
import { errorResponse } from './errors.ts'

// Bun drops a handler's Content-Length on streamed bodies (oven-sh/bun#10507), so bodies are assembled in memory
// (an entry is at most ~37.5 MB) and open-ended ranges are served in slices, as media players expect.
const OPEN_RANGE_SLICE = 8 * 1024 * 1024

async function collect(source: AsyncIterable<Uint8Array>, length: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(length)
  let offset = 0
  for await (const chunk of source) {
    out.set(chunk.subarray(0, length - offset), offset)
    offset += chunk.byteLength
    if (offset >= length) break
  }
  return out
}

const SANDBOXED = new Set(['text/html', 'image/svg+xml'])

type Range = { start: number; end: number } | 'unsatisfiable' | null

export function parseRange(header: string | null, size: number): Range {
  if (!header) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match || (match[1] === '' && match[2] === '')) return null // multi-range or malformed: serve the whole
  if (match[1] === '') {
    const suffix = Number(match[2])
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === '' ? Math.min(size - 1, start + OPEN_RANGE_SLICE - 1) : Math.min(Number(match[2]), size - 1)
  if (start >= size || end < start) return 'unsatisfiable'
  return { start, end }
}

export async function serveContent(content: ContentStore, entry: Pick<EntryRow, 'cid' | 'mime_type'>, request: Request, cacheControl = 'private, max-age=300'): Promise<Response> {
  // Checked before streaming: a missing block would otherwise fail mid-response.
  const size = await content.size(entry.cid)
  if (size === null) return errorResponse('CONTENT_NOT_FOUND', 'content is not in the store')
  const etag = `"${entry.cid}"`
  // Rows stored before mime_type was checked against the media-type grammar may hold anything (CR/LF, non-ASCII):
  // such a value must never reach a header, so it degrades to its base type or application/octet-stream.
  const contentType = safeMediaType(entry.mime_type)
  const headers: Record<string, string> = {
    'content-type': contentType,
    etag,
    'accept-ranges': 'bytes',
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
    'content-disposition': 'inline',
  }
  // A stored value that had to be replaced is sandboxed too: whatever it claimed to be, it is not trusted.
  if (SANDBOXED.has(mediaTypeBase(contentType) ?? '') || contentType !== entry.mime_type) headers['content-security-policy'] = 'sandbox'
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    return new Response(null, { status: 304, headers })
  }
  const ifRange = request.headers.get('if-range')
  const range = ifRange && ifRange !== etag ? null : parseRange(request.headers.get('range'), size)
  if (range === 'unsatisfiable') {
    return new Response(JSON.stringify({ error: 'range not satisfiable', code: 'RANGE_NOT_SATISFIABLE' }), {
      status: 416,
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-range': `bytes */${size}` },
    })
  }
  // HEAD is answered by Elysia from this GET answer: it measures the body for Content-Length, and Bun sends none.
  if (range) {
    const length = range.end - range.start + 1
    headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`
    headers['content-length'] = String(length)
    const body = await collect(content.read(entry.cid, { offset: range.start, length }), length)
    return new Response(body, { status: 206, headers })
  }
  headers['content-length'] = String(size)
  const body = size === 0 ? null : await collect(content.read(entry.cid), size)
  return new Response(body, { status: 200, headers })
}
