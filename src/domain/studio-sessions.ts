// The studio session: after one sign-in (the same nonce and message rules as any signed request), a token of its own
// scope ('studio', sessions.ts) in an HttpOnly, SameSite=Strict cookie stands for the wallet on the writes of its own
// resources made by the studio's pages, for at most 12 hours, until sign-out ends it on every instance (live-sessions.ts,
// the reading session's ended-sessions notice). A write it stands for must come from this server's own pages: its
// Origin is the public origin, its Sec-Fetch-Site (when sent) same-origin, and it carries the CSRF token bound to the
// session (an HMAC of the session's id under a key derived from the server key), which only the studio's pages can
// read. A request that says nothing of where it comes from (no Origin, no Sec-Fetch-Site: not a browser) is never
// written for by the cookie: it signs, as every API client does. Which routes take it: routes/studio-writes.ts.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Records } from '../store/stores.ts'
import { checksumAddress } from '../chain/signatures.ts'
import { fail } from './errors.ts'
import type { Signer } from './auth.ts'
import { liveSessions } from './live-sessions.ts'
import { sessionTokens, type Session } from './sessions.ts'

/** Where a browser says a request comes from: its Origin and Sec-Fetch-Site headers (null when not sent). */
export interface RequestSite {
  origin: string | null
  fetchSite: string | null
}

export interface StudioSession extends Session {
  token: string
  csrf: string
}

const CROSS_SITE = 'a studio session is used only by the pages of this server'

export function studioSessions(d: { records: Records; secret: Uint8Array; origin: () => string }) {
  const tokens = sessionTokens(d.secret, 'studio')
  const live = liveSessions(tokens, d.records)
  const key = createHmac('sha256', d.secret).update('trellis studio csrf tokens').digest()
  const csrfOf = (session: Session) => createHmac('sha256', key).update(session.id).digest('base64url')
  const csrfMatches = (session: Session, sent: string | null) => {
    if (sent === null) return false
    const expected = Buffer.from(csrfOf(session))
    const given = Buffer.from(sent)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /**
   * 'page' for a request that says it comes from this server's own pages, 'unsaid' for one that says nothing (no
   * Origin, no Sec-Fetch-Site); CROSS_SITE_REQUEST for one from anywhere else.
   */
  function whence(site: RequestSite): 'page' | 'unsaid' {
    if (site.origin === null && site.fetchSite === null) return 'unsaid'
    if (site.origin !== null && site.origin !== d.origin()) fail('CROSS_SITE_REQUEST', CROSS_SITE)
    if (site.fetchSite !== null && site.fetchSite !== 'same-origin') fail('CROSS_SITE_REQUEST', CROSS_SITE)
    return 'page'
  }

  return {
    /** Opens a studio session for a wallet that just signed in; refused to a page of another origin. */
    async open(signer: Signer, site: RequestSite): Promise<StudioSession> {
      whence(site)
      const session = await tokens.sign(signer.address)
      return { ...session, csrf: csrfOf(session) }
    },

    /** The live session of a token, with its CSRF token, for the studio's pages only; AUTH_REQUIRED without one. */
    async current(token: string | null, site: RequestSite): Promise<StudioSession> {
      if (whence(site) === 'unsaid') fail('CROSS_SITE_REQUEST', 'the studio session is given to the pages of this server only')
      const session = token ? await live.get(token) : null
      if (!session || !token) return fail('AUTH_REQUIRED', 'no studio session: sign in to the studio first')
      return { ...session, token, csrf: csrfOf(session) }
    },

    /**
     * The wallet a write stands for by a studio session: null for a request that says nothing of where it comes from
     * (it must sign); else it must come from this server's pages, with a live session and that session's CSRF token.
     */
    async signer(token: string, site: RequestSite & { csrf: string | null }): Promise<Signer | null> {
      if (whence(site) === 'unsaid') return null
      if (site.origin === null) fail('CROSS_SITE_REQUEST', 'a write by studio session needs the Origin of this server')
      const session = await live.get(token)
      if (!session) return fail('STUDIO_SESSION_INVALID', 'the studio session has ended or expired: sign in to the studio again')
      if (!csrfMatches(session, site.csrf)) fail('INVALID_CSRF_TOKEN', "the CSRF token is missing or not this studio session's")
      return { address: checksumAddress(session.address), network: null }
    },

    /**
     * The live session of a studio page's request (a navigation, which sends no Origin): its cookie is SameSite=Strict
     * so no other site's link or form brings it, and the pages may not be framed; null without a live one.
     */
    async ofPage(token: string | null, fetchSite: string | null): Promise<StudioSession | null> {
      if (!token || (fetchSite !== null && fetchSite !== 'same-origin' && fetchSite !== 'none')) return null
      const session = await live.get(token)
      return session && { ...session, token, csrf: csrfOf(session) }
    },

    /** Sign-out: the token's session ends now, on every instance. */
    end: (token: string) => live.end(token),
  }
}
export type StudioSessions = ReturnType<typeof studioSessions>
