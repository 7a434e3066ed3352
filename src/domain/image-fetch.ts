// Fetching a cover image from an http(s) URL without letting the URL reach this host's own network
// (lib/public-fetch.ts). Redirects are followed by hand, each hop vetted the same way.
import { failFetch, PublicFetchFailed, requestAny, timeLimit, vettedAddresses } from '../lib/public-fetch.ts'

/** Why a fetch failed: for the log only. */
export { PublicFetchFailed as ImageFetchFailed }

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
const FETCH_TIMEOUT_MS = 10_000
const MAX_REDIRECTS = 3

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

/** The body at `url` (following up to 3 redirects); throws ImageFetchFailed, with the reason, for any failure. */
export async function fetchPublicImage(url: URL, allowPrivate: boolean): Promise<Uint8Array> {
  const { signal, deadline } = timeLimit(FETCH_TIMEOUT_MS)
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
      if (error instanceof PublicFetchFailed) throw error
      return failFetch(signal.aborted ? 'timed out' : `reading the body: ${(error as Error).message}`)
    }
  }
  return failFetch('more than 3 redirects')
}
