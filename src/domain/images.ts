// Cover images: image_url may be an http(s) URL, a data URI, raw base64 or the CID of an image already stored here.
// Only PNG, JPEG, GIF, WebP and SVG are taken, known by their bytes (not by what a URL or data URI claims).
import type { ContentStore } from '../content/store.ts'
import type { Records } from '../store/stores.ts'
import type { ImageRecord } from '../models/records.ts'
import { nowSeconds } from '../lib/clock.ts'
import { concatChunks } from '../lib/chunks.ts'
import { fail } from './errors.ts'
import { decodeStrictBase64 } from './base64.ts'
import { fetchPublicImage, ImageFetchFailed, MAX_IMAGE_BYTES } from './image-fetch.ts'

/** Where a failed fetch's reason goes (the client never sees it). */
export type FetchLog = (msg: string, fields?: Record<string, unknown>) => void

const invalid = (details: string): never => fail('invalid_request', `image_url ${details}`, 'image_url')

// One answer for every way a URL can fail (unresolvable, private, refused, reset, timed out, an error status, too
// big, no image): telling them apart would let image_url probe which ports are open where this server stands.
const URL_FAILED =
  'could not be fetched as an image: an http(s) URL must answer 200 with a PNG, JPEG, GIF, WebP ' +
  'or SVG image of at most 10 MB from a public address'

async function imageFromUrl(url: URL, allowPrivate: boolean, log: FetchLog): Promise<{ bytes: Uint8Array; mimeType: string }> {
  try {
    const bytes = await fetchPublicImage(url, allowPrivate)
    const mimeType = bytes.byteLength > 0 ? sniffImageType(bytes) : null
    if (!mimeType) throw new ImageFetchFailed(`${bytes.byteLength} bytes that are no image`)
    return { bytes, mimeType }
  } catch (error) {
    if (!(error instanceof ImageFetchFailed)) throw error
    log('image_url fetch failed', { host: url.host, reason: error.message })
    return invalid(URL_FAILED)
  }
}

function decodeDataUri(uri: string): Uint8Array {
  const match = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(uri)
  if (!match) return invalid('is not a valid data URI')
  if (match[2]) return decodeStrictBase64(match[3]) ?? invalid('has invalid base64 data')
  try {
    return new TextEncoder().encode(decodeURIComponent(match[3]))
  } catch {
    return invalid('is not a valid data URI')
  }
}

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) => prefix.every((b, i) => bytes[at + i] === b)
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

/** The image type of these bytes, by their signature; null when they are none of the five. */
export function sniffImageType(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png'
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif'
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp'
  // SVG is text: an <svg> root, after an optional BOM, XML declaration, comments and doctype.
  const head = new TextDecoder().decode(bytes.subarray(0, 4096)).replace(/^\uFEFF/, '')
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]/i.test(head)) return 'image/svg+xml'
  return null
}

/** Stores the image, records it as one, and returns its CID. */
export async function ingestImage(
  imageUrl: string,
  content: ContentStore,
  records: Records,
  allowPrivate: boolean,
  log: FetchLog,
): Promise<string> {
  const text = imageUrl.trim()
  if (text === '') invalid('must not be empty')
  let bytes: Uint8Array
  if (/^https?:\/\//i.test(text)) {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return invalid('is not a valid URL')
    }
    const image = await imageFromUrl(url, allowPrivate, log)
    return record(image.bytes, image.mimeType, content, records)
  } else if (/^data:/i.test(text)) {
    bytes = decodeDataUri(text)
  } else if (content.cidOf(text)) {
    return storedImage(text, content, records)
  } else {
    bytes = decodeStrictBase64(text) ?? invalid('must be an http(s) URL, a data URI, base64 image data or a CID')
  }
  if (bytes.byteLength === 0) invalid('is empty')
  if (bytes.byteLength > MAX_IMAGE_BYTES) invalid('is larger than 10 MB')
  const mimeType = sniffImageType(bytes) ?? invalid('is not a PNG, JPEG, GIF, WebP or SVG image')
  return record(bytes, mimeType, content, records)
}

/**
 * The operator's takedown follows the bytes: while it stands, the cover of a feed taken down (or an entry's image)
 * becomes no other feed's cover, by its CID or by the same bytes sent again, and is served under none.
 */
export async function refuseTakenDown(cid: string, records: Records): Promise<void> {
  if (await records.read.images.isTakenDown(cid)) fail('TAKEN_DOWN', 'this image was taken down by the operator of this server')
}

async function record(bytes: Uint8Array, mimeType: string, content: ContentStore, records: Records): Promise<string> {
  const { cid, size } = await content.put(bytes)
  await refuseTakenDown(cid, records)
  await records.transact((tx) => tx.images.record({ cid, mime_type: mimeType, size, created_at: nowSeconds() }))
  return cid
}

/** A CID given as a cover: only one stored as an image here (never an entry's content). */
export async function storedImage(text: string, content: ContentStore, records: Records, field = 'image_url'): Promise<string> {
  const cid = content.cidOf(text) ?? fail('invalid_request', `${field} is not a valid CID`, field)
  if (!(await records.read.images.byCid(cid))) fail('invalid_request', `${field} names a CID that is not an image stored here`, field)
  await refuseTakenDown(cid, records)
  return cid
}

/**
 * The image a feed's image_cid names (451 while taken down). A cover set before images were recorded is checked once: it is served only
 * if it is an image and no entry's content (else a paid entry could be read as someone's cover).
 */
export async function coverImage(cid: string, content: ContentStore, records: Records): Promise<ImageRecord | null> {
  await refuseTakenDown(cid, records)
  const known = await records.read.images.byCid(cid)
  if (known) return known
  if ((await records.read.images.isEntryContent(cid)) || !(await content.has(cid))) return null
  const size = await content.size(cid)
  if (size === null || size > MAX_IMAGE_BYTES) return null
  const length = Math.min(size, 4096)
  const mimeType = sniffImageType(await concatChunks(content.read(cid, { offset: 0, length }), length))
  if (!mimeType) return null
  const image = { cid, mime_type: mimeType, size, created_at: nowSeconds() }
  await records.transact((tx) => tx.images.record(image))
  return image
}
