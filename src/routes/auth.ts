// /v1/auth: nonces to sign, and browser sessions opened with one.
import { Elysia } from 'elysia'
import { BrowserSession, Nonce, NonceRequest, SIGNED_HEADERS_TEXT } from '../models/index.ts'
import type { Services } from './services.ts'
import { jsonBody } from '../edge/body.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { DomainError } from '../domain/errors.ts'
import { SESSION_COOKIE, SESSION_TTL_S, WALLET_COOKIE } from '../domain/sessions.ts'
import { sessionCookie, walletAuth } from './wallet-auth.ts'

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

export const authRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/auth', tags: ['Authentication'] })
    .use(walletAuth(s.auth))
    .post('/nonce', ({ body }) => s.auth.issueNonce(body.wallet_address), {
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
            'buyer can read them in pages); every write still needs its own signature. Refused to a page of ' +
            'another site.',
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
    .delete(
      '/session',
      async ({ request }) => {
        const token = sessionCookie(request.headers)
        if (token) await s.auth.endSession(token)
        return new Response(null, { status: 204, headers: sessionCookies(s, null) })
      },
      {
        response: {
          204: NoBody(
            'Signed out: the session ends on every instance (a kept copy of the cookie opens nothing), and the cookie is cleared',
          ),
        },
        detail: { summary: 'Close the browser session' },
      },
    )
