// The writes a studio session may make without a signature (domain/studio-sessions.ts), all in one place: those of
// the wallet's own resources — feeds, entries, access links, webhooks, its profile, its feeds' pass offers. Nothing
// that moves money is here (buying an entry or a pass, which pay by x402) nor any other signed route: those keep
// their signature. The guard (wallet-auth.ts) asks only on a route that requires a signature and got none.
import type { AuthService, Signer } from '../domain/auth.ts'
import { STUDIO_COOKIE } from '../domain/sessions.ts'
import { STUDIO_CSRF_HEADER } from '../models/auth.ts'

/** Method and route template; `:name` is one path segment. */
export const STUDIO_WRITES: readonly (readonly [method: string, path: string])[] = [
  ['POST', '/v1/feeds'],
  ['PATCH', '/v1/feeds/:feed_id'],
  ['DELETE', '/v1/feeds/:feed_id'],
  ['POST', '/v1/feeds/:feed_id/entries'],
  ['PATCH', '/v1/feeds/:feed_id/entries/:entry_id'],
  ['DELETE', '/v1/feeds/:feed_id/entries/:entry_id'],
  ['POST', '/v1/feeds/:feed_id/entries/:entry_id/access-link'],
  ['DELETE', '/v1/access-links/:id'],
  ['POST', '/v1/webhooks'],
  ['DELETE', '/v1/webhooks/:webhook_id'],
  ['POST', '/v1/webhooks/:webhook_id/test'],
  ['PATCH', '/v1/wallets/:wallet_id'],
  ['PUT', '/v1/feeds/:feed_id/pass'],
  ['DELETE', '/v1/feeds/:feed_id/pass'],
]

const matchers = STUDIO_WRITES.map(([method, path]) => [method, new RegExp(`^${path.replace(/:[a-z_]+/g, '[^/]+')}$`)] as const)

/** Whether a request is one of the studio's writes (by its method and path). */
export function isStudioWrite(method: string, url: string): boolean {
  const path = new URL(url, 'http://path.only').pathname
  return matchers.some(([m, pattern]) => m === method && pattern.test(path))
}

/** A cookie's value, if the request sent it. */
export function cookieOf(headers: Headers, name: string): string | null {
  const cookies = headers.get('cookie')
  return cookies?.includes(`${name}=`) ? new Bun.CookieMap(cookies).get(name) : null
}

/**
 * The signer a studio session stands for on a studio write that carries its cookie: null when it is no studio write,
 * sends no cookie, or says nothing of where it comes from (then it must sign); refused (403) when it comes from
 * another origin, or its session is not live, or its CSRF token is not the session's.
 */
export function studioSigner(auth: AuthService, request: Request): Promise<Signer | null> | null {
  return isStudioWrite(request.method, request.url) ? studioPageSigner(auth, request) : null
}

/** The signer of a studio page's request (its cookie, Origin, Sec-Fetch-Site and CSRF token), as studioSigner judges it. */
export function studioPageSigner(auth: AuthService, request: Request): Promise<Signer | null> | null {
  const h = request.headers
  const token = cookieOf(h, STUDIO_COOKIE)
  if (!token) return null
  return auth.studio.signer(token, { origin: h.get('origin'), fetchSite: h.get('sec-fetch-site'), csrf: h.get(STUDIO_CSRF_HEADER) })
}
