// GET /v1/feeds/{id}/image on the hot-read path: a feed's cover, when it is a small image already recorded here,
// answered from its bytes held in memory (by CID, so they never go stale) with headers made once. The first request
// for an image goes to the Elysia route while its bytes load; ranges, HEAD and anything unusual always go there.
import type { Services } from './services.ts'
import type { ImageRecord } from '../models/records.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'
import { contentHeaders, matchesEtag } from './serve-content.ts'
import { isUuid } from '../lib/ids.ts'

/** Images larger than this are served by the route (read per request); smaller ones are held. */
const HELD_IMAGE_MAX_BYTES = 1024 * 1024
/** All held images together; the oldest held goes first. */
const HELD_TOTAL_MAX_BYTES = 16 * 1024 * 1024

/** Asked for by its CID (the feed's image_cid), the answer can never change: cached as immutable. */
export const coverCacheControl = (cidParam: string | undefined, image: Pick<ImageRecord, 'cid'>): string =>
  cidParam === image.cid ? 'public, max-age=31536000, immutable' : 'public, max-age=60'

interface Held {
  ok: Prepared<Uint8Array<ArrayBuffer>>
  notModified: Prepared<null>
  etag: string
}

export function coverImages(s: Services) {
  const bytesByCid = new Map<string, Uint8Array<ArrayBuffer>>()
  const loading = new Set<string>()
  const answers = new Map<string, Held>() // by CID and cache-control; made from bytesByCid, dropped with them
  let heldBytes = 0

  function hold(cid: string, bytes: Uint8Array<ArrayBuffer>): void {
    for (const [oldest, old] of bytesByCid) {
      if (heldBytes + bytes.byteLength <= HELD_TOTAL_MAX_BYTES) break
      bytesByCid.delete(oldest)
      heldBytes -= old.byteLength
      for (const key of answers.keys()) if (key.startsWith(`${oldest} `)) answers.delete(key)
    }
    bytesByCid.set(cid, bytes)
    heldBytes += bytes.byteLength
  }

  function load(image: ImageRecord): void {
    if (image.size > HELD_IMAGE_MAX_BYTES || loading.has(image.cid)) return
    loading.add(image.cid)
    s.content
      .size(image.cid)
      .then((size) => (size === null || size > HELD_IMAGE_MAX_BYTES ? null : s.content.body(image.cid, size)))
      .then(
        (bytes) => {
          if (bytes instanceof Uint8Array) hold(image.cid, bytes)
        },
        () => {},
      ) // the route reports failures
      .finally(() => loading.delete(image.cid))
  }

  function answersFor(image: ImageRecord, bytes: Uint8Array<ArrayBuffer>, cacheControl: string): Held {
    const key = `${image.cid} ${cacheControl}`
    let held = answers.get(key)
    if (!held) {
      const headers = contentHeaders(image, cacheControl)
      held = {
        ok: { body: bytes, init: { status: 200, headers: withCors({ ...headers, 'content-length': String(bytes.byteLength) }) } },
        notModified: { body: null, init: { status: 304, headers: withCors(headers) } },
        etag: headers.etag!,
      }
      answers.set(key, held)
    }
    return held
  }

  /** The answer to a plain GET of a feed's cover, or null: the Elysia route answers. */
  return (request: Request & { params: Record<string, string> }): Prepared<Uint8Array<ArrayBuffer> | null> | null => {
    const id = request.params.feed_id
    if (!isUuid(id) || id !== id.toLowerCase()) return null
    const url = request.url
    const q = url.indexOf('?')
    const search = q < 0 || q === url.length - 1 ? '' : url.slice(q + 1)
    if (search !== '' && !/^cid=[A-Za-z0-9]+$/.test(search)) return null
    // Which image the feed names now: kept until the database next changes (a PATCH may name another).
    const key = `cover:${id}`
    const image = s.cached.peek<ImageRecord | null>(key)
    if (image === undefined)
      void s.cached
        .get(
          key,
          () => s.feeds.knownCover(id),
          () => 128,
        )
        .catch(() => {}) // for the next request
    if (!image) return null
    const bytes = bytesByCid.get(image.cid)
    if (!bytes) {
      load(image)
      return null
    }
    const headers = request.headers
    if (headers.has('range') || headers.has('if-range')) return null
    const held = answersFor(image, bytes, coverCacheControl(search === '' ? undefined : search.slice(4), image))
    return matchesEtag(headers.get('if-none-match'), held.etag) ? held.notModified : held.ok
  }
}
