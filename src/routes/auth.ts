// /v1/auth: nonces to sign, and browser sessions opened with one: the pages' reading session, the studio's session.
import { Elysia } from 'elysia'
import { BrowserSession, Nonce, NonceRequest, SIGNED_HEADERS_TEXT, STUDIO_CSRF_HEADER, StudioSession } from '../models/index.ts'
import { CHAIN_ID_HEADER } from '../models/auth.ts'
import type { Services } from './services.ts'
import { jsonBody } from '../edge/body.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { DomainError } from '../domain/errors.ts'
import { SESSION_COOKIE, SESSION_TTL_S, STUDIO_COOKIE, STUDIO_TTL_S, WALLET_COOKIE } from '../domain/sessions.ts'
import type { StudioSession as Studio } from '../domain/studio-sessions.ts'
import { sessionCookie, walletAuth } from './wallet-auth.ts'
import { cookieOf, STUDIO_WRITES } from './studio-writes.ts'

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Lax (no other site's requests carry it), Secure over
 * https; beside it a readable one naming the wallet, so a page can say who is signed in without asking.
 */
function sessionCookies(s: Services, session: { token: string; address: string } | null): Headers {
  const options = { path: '/', sameSite: 'lax', secure: s.publicUrl().startsWith('https:'), maxAge: session ? SESSION_TTL_S : 0 } as const
  const headers = new Headers({ 'content-type': 'application/json', 'cache-control': 'no-store' })
  headers.append('set-cookie', new Bun.Cookie(SESSION_COOKIE, session?.token ?? '', { ...options, httpOnly: true }).toString())
  headers.append('set-cookie', new Bun.Cookie(WALLET_COOKIE, session?.address ?? '', options).toString())
  return headers
}

/** The studio's cookie: HttpOnly, SameSite=Strict (no request from another site carries it), Secure over https. */
function studioCookie(s: Services, session: { token: string } | null): string {
  const secure = s.publicUrl().startsWith('https:')
  const options = { path: '/', sameSite: 'strict', secure, httpOnly: true, maxAge: session ? STUDIO_TTL_S : 0 } as const
  return new Bun.Cookie(STUDIO_COOKIE, session?.token ?? '', options).toString()
}

const studioBody = (session: Studio): StudioSession => ({
  wallet_address: session.address,
  expires_at: session.expiresAt,
  csrf_token: session.csrf,
})
const siteOf = (request: Request) => ({ origin: request.headers.get('origin'), fetchSite: request.headers.get('sec-fetch-site') })

/** Sign-out, from either session's route: both sessions the browser holds end, on every instance; the cookies are cleared. */
async function signOut(s: Services, request: Request): Promise<Response> {
  const reading = sessionCookie(request.headers)
  const studio = cookieOf(request.headers, STUDIO_COOKIE)
  if (reading) await s.auth.endSession(reading)
  if (studio) await s.auth.studio.end(studio)
  const headers = sessionCookies(s, null)
  headers.append('set-cookie', studioCookie(s, null))
  return new Response(null, { status: 204, headers })
}
const SIGNED_OUT = NoBody(
  'Signed out: the sessions end on every instance (a kept copy of a cookie opens nothing), and the cookies are cleared',
)
const STUDIO_ROUTES = STUDIO_WRITES.map(([method, path]) => `${method} ${path}`).join(', ')

export const authRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/auth', tags: ['Authentication'] })
    .use(walletAuth(s.auth))
    .post('/nonce', ({ body, request }) => s.auth.issueNonce(body.wallet_address, request.headers.get(CHAIN_ID_HEADER)), {
      parse: jsonBody(),
      body: NonceRequest,
      response: { 200: Nonce },
      detail: {
        summary: 'Get a nonce to sign',
        description: `Single use, valid 5 minutes. Send the signed message back in the ${SIGNED_HEADERS_TEXT} headers.`,
      },
    })
    .post(
      '/session',
      async ({ signer, request }) => {
        const session = await s.auth.openSession(signer, request.headers.get('sec-fetch-site'))
        const body: BrowserSession = { wallet_address: session.address, expires_at: session.expiresAt }
        return new Response(JSON.stringify(body), { headers: sessionCookies(s, session) })
      },
      {
        wallet: true,
        response: { 200: BrowserSession, ...errors(403) },
        detail: {
          summary: 'Open a browser session',
          description:
            'Signed like any protected route (the pages sign siwe_message). Sets an HttpOnly cookie that ' +
            'stands for the wallet for one day on reads of entries and their bytes (so an owner or past ' +
            "buyer can read them in pages); it never writes (a write signs, or the studio's pages use " +
            'POST /v1/auth/studio). Refused to a page of another site.',
        },
      },
    )
    .get(
      '/session',
      async ({ request }) => {
        const token = sessionCookie(request.headers)
        const session = token && (await s.auth.session(token))
        if (!session) throw new DomainError('AUTH_REQUIRED', 'no browser session: sign in first')
        const body: BrowserSession = { wallet_address: session.address, expires_at: session.expiresAt }
        return jsonResponse(JSON.stringify(body), { 'cache-control': 'no-store' })
      },
      {
        response: { 200: BrowserSession, ...errors(401) },
        detail: { summary: 'The browser session', description: 'Who the session cookie stands for; 401 without a live one.' },
      },
    )
    .delete('/session', ({ request }) => signOut(s, request), {
      response: { 204: SIGNED_OUT },
      detail: { summary: 'Close the browser session', description: 'Ends the studio session too, when the browser holds one.' },
    })
    .post(
      '/studio',
      async ({ signer, request }) => {
        const session = await s.auth.studio.open(signer, siteOf(request))
        const headers = new Headers({ 'content-type': 'application/json', 'cache-control': 'no-store' })
        headers.append('set-cookie', studioCookie(s, session))
        return new Response(JSON.stringify(studioBody(session)), { headers })
      },
      {
        wallet: true,
        response: { 200: StudioSession, ...errors(403) },
        detail: {
          summary: 'Open a studio session',
          description:
            'Signed like any protected route (the pages sign siwe_message). Sets an HttpOnly, SameSite=Strict cookie ' +
            "that stands for the wallet for 12 hours on the writes of its own resources made by the studio's pages, " +
            `with the Origin of this server, Sec-Fetch-Site same-origin (when sent) and csrf_token in ${STUDIO_CSRF_HEADER}: ` +
            `${STUDIO_ROUTES}. A request with a signature is judged by it; one without Origin or Sec-Fetch-Site ` +
            'must sign; no purchase ever stands on it. Refused to a page of another origin.',
        },
      },
    )
    .get(
      '/studio',
      async ({ request }) => {
        const session = await s.auth.studio.current(cookieOf(request.headers, STUDIO_COOKIE), siteOf(request))
        return jsonResponse(JSON.stringify(studioBody(session)), { 'cache-control': 'no-store' })
      },
      {
        response: { 200: StudioSession, ...errors(401, 403) },
        detail: {
          summary: 'The studio session and its CSRF token',
          description:
            "For the studio's pages only (Sec-Fetch-Site same-origin, or this server's Origin): who the studio cookie " +
            'stands for, until when, and the CSRF token its writes send; 401 without a live one.',
        },
      },
    )
    .delete('/studio', ({ request }) => signOut(s, request), {
      response: { 204: SIGNED_OUT },
      detail: { summary: 'Close the studio session', description: 'Ends the reading session too, when the browser holds one.' },
    })
