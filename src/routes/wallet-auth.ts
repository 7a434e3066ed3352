// The signature guard, the one place a write's signer is established. It runs in the parse/transform phase so a
// protected route answers 401 before it reads or validates anything: the SDK only signs after a 401. On routes with a
// body, the same parse hook then reads the JSON body under its byte limit. A signature, when sent, is checked and
// decides; without one, the studio's writes (studio-writes.ts) may stand on a studio session from its pages.
import { Elysia } from 'elysia'
import type { AuthService, Signer } from '../domain/auth.ts'
import { DomainError } from '../domain/errors.ts'
import { DEFAULT_BODY_LIMIT, readJson } from '../edge/body.ts'
import { rssBeforeBody } from '../lib/memory-guard.ts'
import { SESSION_COOKIE } from '../domain/sessions.ts'
import { CHAIN_ID_HEADER, SIGNED_HEADERS_TEXT, WALLET_AUTH_HEADERS as HEADER } from '../models/auth.ts'
import { cookieOf, studioSigner } from './studio-writes.ts'

const signers = new WeakMap<Request, Signer | null>()

/**
 * Reads a signed request's body; it knows who signed, so it may act on the body as it arrives. `rssAtArrival`: the
 * process's RSS before the signature was checked (meanwhile the body arrives and is held for the reader), 0 for a
 * body too small for memoryGuard to check.
 */
export type BodyReader = (
  request: Request,
  limit: number,
  signed: { signer: Signer; params: Record<string, string>; rssAtArrival: number },
) => Promise<unknown>

/** The four headers, all required together (see the security schemes in docs.ts). */
export const WALLET_SECURITY = { walletAddress: [], walletSignature: [], walletMessage: [], walletTimestamp: [] }

/** The (reading) session token a browser sent, if any. */
export const sessionCookie = (headers: Headers): string | null => cookieOf(headers, SESSION_COOKIE)

async function authenticateOnce(auth: AuthService, request: Request, required: boolean): Promise<void> {
  if (signers.has(request)) return
  const h = request.headers
  let signer = await auth.authenticate({
    address: h.get(HEADER.address),
    signature: h.get(HEADER.signature),
    message: h.get(HEADER.message),
    timestamp: h.get(HEADER.timestamp),
    chainId: h.get(CHAIN_ID_HEADER),
  })
  // A browser session stands for its wallet on reads where signing is optional (an entry and its bytes).
  const session = !signer && !required && (request.method === 'GET' || request.method === 'HEAD') ? sessionCookie(h) : null
  if (session) signer = await auth.sessionSigner(session)
  // The studio's writes, unsigned, by the studio session of its pages (never a reading session's cookie).
  if (!signer && required) signer = await studioSigner(auth, request)
  if (!signer && required)
    throw new DomainError(
      'AUTH_REQUIRED',
      `authentication required: sign a nonce from POST /v1/auth/nonce and send the ${SIGNED_HEADERS_TEXT} headers`,
    )
  signers.set(request, signer)
}

export const walletAuth = (auth: AuthService) =>
  new Elysia({ name: 'wallet-auth' }).macro({
    /**
     * Requires a valid wallet signature; the handler gets `signer`. `{bodyLimit}` caps the JSON body; `readBody`
     * replaces the plain JSON reader.
     */
    wallet: (options: true | { bodyLimit: number; readBody?: BodyReader }) => ({
      detail: { security: [WALLET_SECURITY] },
      parse: async ({ request, params }: { request: Request; params: Record<string, string> }) => {
        const rssAtArrival =
          options !== true && options.readBody ? rssBeforeBody(Number(request.headers.get('content-length') ?? Number.NaN)) : 0
        await authenticateOnce(auth, request, true)
        const read: BodyReader = options === true ? readJson : (options.readBody ?? readJson)
        return (
          (await read(request, options === true ? DEFAULT_BODY_LIMIT : options.bodyLimit, {
            signer: signers.get(request) as Signer,
            params,
            rssAtArrival,
          })) ?? {}
        )
      },
      transform: ({ request }: { request: Request }) => authenticateOnce(auth, request, true),
      resolve: ({ request }: { request: Request }) => ({ signer: signers.get(request) as Signer }),
    }),
    /** Checks a signature when one is sent, else a browser session on a GET; `signer` is null without either. */
    walletOptional: {
      detail: { security: [{}, WALLET_SECURITY] },
      transform: ({ request }) => authenticateOnce(auth, request, false),
      resolve: ({ request }) => ({ signer: signers.get(request) ?? null }),
    },
  })
