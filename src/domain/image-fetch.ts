// Fetching a cover image from an http(s) URL without letting the URL reach this host's own network. Each hop's host
// is resolved once, every address it resolves to is vetted, and the connection goes to the vetted address itself:
// the name travels only in the Host header and as the TLS server name (SNI and the certificate check). A name that
// answers a public address to the check and 127.0.0.1 to the connect (DNS rebinding) therefore gains nothing.
// Redirects are followed by hand, each hop vetted the same way.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
const FETCH_TIMEOUT_MS = 10_000
const MAX_REDIRECTS = 3

/** Why a fetch failed: for the log only. The client gets one answer for every failure (no port probing). */
export class ImageFetchFailed extends Error {}

const failFetch = (detail: string): never => {
  throw new ImageFetchFailed(detail)
}

/** Globally routable unicast only: no loopback, private, link-local, ULA, multicast, reserved, or v4 inside v6. */
function isPublicAddress(address: string): boolean {
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast'
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return false // ::/96, IPv4-compatible (deprecated)
  }
  return parsed.range() === 'unicast'
}

/** The addresses to connect to for `hostname`; every address the name has must be public (unless allowed). */
async function vettedAddresses(hostname: string, allowPrivate: boolean, deadline: Promise<never>): Promise<string[]> {
  const bare = hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  if (isIP(bare)) addresses = [bare]
  else {
    try {
      addresses = (await Promise.race([lookup(bare, { all: true }), deadline])).map((a) => a.address)
    } catch (error) {
      if (error instanceof ImageFetchFailed) throw error
      return failFetch(`${hostname} did not resolve: ${(error as Error).message}`)
    }
  }
  if (addresses.length === 0) failFetch(`${hostname} has no address`)
  const refused = allowPrivate ? undefined : addresses.find((address) => !isPublicAddress(address))
  if (refused) failFetch(`${hostname} → ${refused}: not a public address`)
  return addresses
}

async function readCapped(response: Response): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_IMAGE_BYTES) failFetch(`declared ${declared} bytes`)
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength
    if (total > MAX_IMAGE_BYTES) failFetch('more than 10 MB')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** One request to `url`, connected to `address` (a vetted one), with the URL's own name as Host and TLS name. */
function requestAt(url: URL, address: string, signal: AbortSignal): Promise<Response> {
  const target = new URL(url)
  target.hostname = isIP(address) === 6 ? `[${address}]` : address
  const name = url.hostname.replace(/^\[|\]$/g, '')
  return fetch(target, {
    redirect: 'manual',
    signal,
    headers: { host: url.host },
    // The certificate is checked against the name, not the address (an IP literal URL keeps the default).
    ...(url.protocol === 'https:' && !isIP(name) ? { tls: { serverName: name } } : {}),
  })
}

/** The first answer from the addresses in turn (a name with an IPv6 address this host cannot reach still works). */
async function requestAny(url: URL, addresses: string[], signal: AbortSignal): Promise<Response> {
  const errors: string[] = []
  for (const address of addresses) {
    try {
      return await requestAt(url, address, signal)
    } catch (error) {
      if (signal.aborted) failFetch('timed out')
      errors.push(`${address}: ${(error as Error).message}`)
    }
  }
  return failFetch(`${url.host}: ${errors.join('; ')}`)
}

/** The body at `url` (following up to 3 redirects); throws ImageFetchFailed, with the reason, for any failure. */
export async function fetchPublicImage(url: URL, allowPrivate: boolean): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS)
  const deadline = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new ImageFetchFailed('timed out')), { once: true }))
  deadline.catch(() => {}) // it only matters while raced
  let current = url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') failFetch(`${current.protocol} is not http(s)`)
    const response = await requestAny(current, await vettedAddresses(current.hostname, allowPrivate, deadline), signal)
    const location = response.headers.get('location')
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel().catch(() => {})
      try {
        current = new URL(location, current)
      } catch {
        return failFetch(`redirect to an invalid URL: ${location}`)
      }
      continue
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      failFetch(`status ${response.status}`)
    }
    try {
      return await readCapped(response)
    } catch (error) {
      await response.body?.cancel().catch(() => {})
      if (error instanceof ImageFetchFailed) throw error
      return failFetch(signal.aborted ? 'timed out' : `reading the body: ${(error as Error).message}`)
    }
  }
  return failFetch('more than 3 redirects')
}
