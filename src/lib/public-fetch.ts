// Requests to URLs that users give (a cover's image_url, a webhook endpoint) without letting them reach this host's
// own network. The URL's host is resolved once, every address it resolves to is vetted, and the connection goes to
// the vetted address itself: the name travels only in the Host header and as the TLS server name (SNI and the
// certificate check). A name that answers a public address to the check and 127.0.0.1 to the connect (DNS
// rebinding) therefore gains nothing.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Which way a request failed: a kind names no address, so it may be told to whoever gave the URL. */
export type FetchFailure = 'unresolved' | 'not-public' | 'timed-out' | 'unreachable' | 'refused'

/**
 * Why a request was refused or failed. The message is the detail (the addresses the name resolved to and those
 * tried), for the server's log only; `kind` (and `code`, the connection's error code, e.g. CERT_HAS_EXPIRED) is all
 * that may go back to the one who gave the URL.
 */
export class PublicFetchFailed extends Error {
  constructor(
    detail: string,
    readonly kind: FetchFailure = 'refused',
    readonly code?: string,
  ) {
    super(detail)
  }
}

export const failFetch = (detail: string, kind?: FetchFailure, code?: string): never => {
  throw new PublicFetchFailed(detail, kind, code)
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
export async function vettedAddresses(hostname: string, allowPrivate: boolean, deadline: Promise<never>): Promise<string[]> {
  const bare = hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  if (isIP(bare)) addresses = [bare]
  else {
    try {
      addresses = (await Promise.race([lookup(bare, { all: true }), deadline])).map((a) => a.address)
    } catch (error) {
      if (error instanceof PublicFetchFailed) throw error
      return failFetch(`${hostname} did not resolve: ${(error as Error).message}`, 'unresolved')
    }
  }
  if (addresses.length === 0) failFetch(`${hostname} has no address`, 'unresolved')
  const refused = allowPrivate ? undefined : addresses.find((address) => !isPublicAddress(address))
  if (refused) failFetch(`${hostname} → ${refused}: not a public address`, 'not-public')
  return addresses
}

/** A signal aborted after `ms`, and a promise that rejects then (to race a lookup, which takes no signal). */
export function timeLimit(ms: number): { signal: AbortSignal; deadline: Promise<never> } {
  const signal = AbortSignal.timeout(ms)
  const deadline = new Promise<never>((_, reject) =>
    signal.addEventListener('abort', () => reject(new PublicFetchFailed('timed out', 'timed-out')), { once: true }),
  )
  deadline.catch(() => {}) // it only matters while raced
  return { signal, deadline }
}

export interface PublicRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
}

/** One request to `url`, connected to `address` (a vetted one), with the URL's own name as Host and TLS name. */
function requestAt(url: URL, address: string, init: PublicRequest, signal: AbortSignal): Promise<Response> {
  const target = new URL(url)
  target.hostname = isIP(address) === 6 ? `[${address}]` : address
  const name = url.hostname.replace(/^\[|\]$/g, '')
  return fetch(target, {
    redirect: 'manual',
    signal,
    method: init.method ?? 'GET',
    body: init.body,
    headers: { ...init.headers, host: url.host },
    // The certificate is checked against the name, not the address (an IP literal URL keeps the default).
    ...(url.protocol === 'https:' && !isIP(name) ? { tls: { serverName: name } } : {}),
  })
}

/** The first answer from the addresses in turn (a name with an IPv6 address this host cannot reach still works). */
export async function requestAny(url: URL, addresses: string[], signal: AbortSignal, init: PublicRequest = {}): Promise<Response> {
  const errors: string[] = []
  let code: string | undefined
  for (const address of addresses) {
    try {
      return await requestAt(url, address, init, signal)
    } catch (error) {
      if (signal.aborted) failFetch('timed out', 'timed-out')
      errors.push(`${address}: ${(error as Error).message}`)
      code = (error as { code?: unknown }).code === undefined ? code : String((error as { code?: unknown }).code)
    }
  }
  return failFetch(`${url.host}: ${errors.join('; ')}`, 'unreachable', code)
}

/**
 * One request to `url` at a vetted address, redirects not followed (a 3xx is the answer); aborted after `timeoutMs`.
 * Throws PublicFetchFailed, with the reason, when the host is not public (unless allowed) or cannot be reached.
 */
export async function requestPublic(url: URL, init: PublicRequest, allowPrivate: boolean, timeoutMs: number): Promise<Response> {
  const { signal, deadline } = timeLimit(timeoutMs)
  return requestAny(url, await vettedAddresses(url.hostname, allowPrivate, deadline), signal, init)
}
