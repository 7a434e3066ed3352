// Cover images: image_url may be an http(s) URL, a data URI, raw base64 or a CID already in our store.
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import type { ContentStore } from '../content/helia.ts'
import { parseCid } from '../content/helia.ts'
import { fail } from './errors.ts'
import { decodeStrictBase64 } from './base64.ts'

const MAX_IMAGE_BYTES = 10 * 1024 * 1024
const FETCH_TIMEOUT_MS = 10_000
const MAX_REDIRECTS = 3

const invalid = (details: string): never => fail('invalid_request', `image_url ${details}`, 'image_url')

async function assertPublicHost(hostname: string): Promise<void> {
  const bare = hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = ipaddr.isValid(bare) ? [bare] : (await lookup(bare, { all: true })).map((a) => a.address)
  } catch {
    return invalid('host could not be resolved')
  }
  for (const address of addresses) {
    let parsed = ipaddr.parse(address)
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
    if (parsed.range() !== 'unicast') invalid('must not point at a private, loopback or reserved address')
  }
}

async function readCapped(response: Response): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_IMAGE_BYTES) invalid('is larger than 10 MB')
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength
    if (total > MAX_IMAGE_BYTES) invalid('is larger than 10 MB')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

async function fetchImage(url: URL, allowPrivate: boolean): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS)
  let current = url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') invalid('must use http or https')
    if (!allowPrivate) await assertPublicHost(current.hostname)
    let response: Response
    try {
      response = await fetch(current, { redirect: 'manual', signal })
    } catch {
      return invalid('could not be fetched')
    }
    if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
      current = new URL(response.headers.get('location')!, current)
      continue
    }
    if (!response.ok) invalid(`could not be fetched (status ${response.status})`)
    try {
      return await readCapped(response)
    } catch (error) {
      if (signal.aborted) invalid('timed out')
      throw error
    }
  }
  return invalid('redirects too many times')
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

/** Stores the image and returns its CID. */
export async function ingestImage(imageUrl: string, content: ContentStore, allowPrivate: boolean): Promise<string> {
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
    bytes = await fetchImage(url, allowPrivate)
  } else if (/^data:/i.test(text)) {
    bytes = decodeDataUri(text)
  } else if (parseCid(text)) {
    if (!(await content.has(text))) invalid('names a CID that is not in this server\'s store')
    return parseCid(text)!.toString()
  } else {
    bytes = decodeStrictBase64(text) ?? invalid('must be an http(s) URL, a data URI, base64 image data or a CID')
  }
  if (bytes.byteLength === 0) invalid('is empty')
  if (bytes.byteLength > MAX_IMAGE_BYTES) invalid('is larger than 10 MB')
  return (await content.put(bytes)).cid
}
