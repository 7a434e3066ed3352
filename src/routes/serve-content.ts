// Serving an entry's bytes: type, length, ETag = CID, single byte ranges (206/416), and headers that keep
// uploaded pages from running script on our origin.
import type { ContentStore } from '../content/store.ts'
import type { EntryRecord } from '../models/records.ts'
import type { ServableContent } from '../domain/entries.ts'
import { mediaTypeBase, safeMediaType } from '../domain/media-type.ts'
import { errorResponse } from '../edge/errors.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'

// Bun drops a handler's Content-Length on streamed bodies (oven-sh/bun#10507, still so in 1.4), so bodies are
// bytes (small items) or files (large ones, see content/file-cache.ts), and open-ended ranges are served in
// slices, as media players expect.
const OPEN_RANGE_SLICE = 8 * 1024 * 1024

const SANDBOXED = new Set(['text/html', 'image/svg+xml'])

/**
 * text/* stored without a charset is served as UTF-8 (the web's and JSON's encoding): a browser would otherwise guess,
 * typically windows-1252, and show UTF-8 text as mojibake. A charset the creator gave is kept.
 */
function withCharset(contentType: string): string {
  const text = mediaTypeBase(contentType)?.startsWith('text/') ?? false
  return text && !/;[ \t]*charset=/i.test(contentType) ? `${contentType}; charset=utf-8` : contentType
}

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

/** The headers of an item's bytes (200, 206 and 304 alike, before the length and range). */
export function contentHeaders(entry: Pick<EntryRecord, 'cid' | 'mime_type'>, cacheControl: string): Record<string, string> {
  // Rows stored before mime_type was checked against the media-type grammar may hold anything (CR/LF, non-ASCII):
  // such a value must never reach a header, so it degrades to its base type or application/octet-stream.
  const contentType = safeMediaType(entry.mime_type)
  const headers: Record<string, string> = {
    'content-type': withCharset(contentType),
    etag: `"${entry.cid}"`,
    'accept-ranges': 'bytes',
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
    'content-disposition': 'inline',
  }
  // A stored value that had to be replaced is sandboxed too: whatever it claimed to be, it is not trusted.
  if (SANDBOXED.has(mediaTypeBase(contentType) ?? '') || contentType !== entry.mime_type) headers['content-security-policy'] = 'sandbox'
  return headers
}

/** Whether an If-None-Match header names this ETag (or is *). */
export const matchesEtag = (ifNoneMatch: string | null, etag: string): boolean =>
  ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*') ?? false

/** Serves an item's content: a sealed one (a paid entry's) is opened with its key, its CID (the ETag) stays the stored one's. */
export async function serveContent(
  content: ContentStore,
  entry: ServableContent,
  request: Request,
  cacheControl = 'private, max-age=300',
): Promise<Response> {
  // Checked before streaming: a missing block would otherwise fail mid-response.
  const size = await content.size(entry.cid)
  if (size === null) return errorResponse('CONTENT_NOT_FOUND', 'content is not in the store')
  const headers = contentHeaders(entry, cacheControl)
  const etag = headers.etag!
  if (matchesEtag(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
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
    return new Response(await content.body(entry.cid, size, { offset: range.start, length }, entry.key), { status: 206, headers })
  }
  headers['content-length'] = String(size)
  return new Response(size === 0 ? null : await content.body(entry.cid, size, undefined, entry.key), { status: 200, headers })
}

/**
 * An item's content as serveContent answers a whole GET, held for the hot routes: when it is at most `maxBytes`, and
 * stored sealed (a paid entry's, opened here) or plainly (a free one's) as `sealed` says; else null.
 */
export async function heldContent(
  content: ContentStore,
  item: ServableContent,
  o: { cacheControl: string; maxBytes: number; sealed: boolean },
): Promise<Prepared<Uint8Array<ArrayBuffer>> | null> {
  const size = Boolean(item.key) === o.sealed ? await content.size(item.cid) : null
  if (size === null || size === 0 || size > o.maxBytes) return null
  const body = await content.body(item.cid, size, undefined, item.key)
  const bytes = body instanceof Blob ? new Uint8Array(await body.arrayBuffer()) : body
  const headers = contentHeaders(item, o.cacheControl)
  headers['content-length'] = String(size)
  return { body: bytes, init: { status: 200, headers: withCors(headers) } }
}

/** An item's content as UTF-8 text, when it is at most `maxBytes` and is text (else null): for a feed to carry inline. */
export async function contentText(content: ContentStore, item: ServableContent, maxBytes: number): Promise<string | null> {
  const size = await content.size(item.cid)
  if (size === null || size > maxBytes) return null
  const body = size === 0 ? new Uint8Array() : await content.body(item.cid, size, undefined, item.key)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body instanceof Blob ? await body.arrayBuffer() : body)
  } catch {
    return null // not UTF-8: served as bytes, never as mangled text
  }
}
