// /v1/auth: nonces to sign.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { jsonBody } from './body.ts'
import { errorResponse } from './errors.ts'

const NonceResponse = t.Object({
  nonce: t.String(),
  message: t.String({ description: 'sign this with personal_sign and send it in x-message' }),
  wallet_address: t.String(),
  expires_at: t.Number({ description: 'Unix seconds' }),
  expiresAt: t.Number({ description: 'Unix milliseconds (as the hosted service sends)' }),
})

export const authRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/auth', tags: ['Authentication'] })
    .post('/nonce', ({ body }) => {
      const walletAddress = body && typeof body === 'object' ? (body as { wallet_address?: unknown }).wallet_address : undefined
      if (walletAddress === undefined) return errorResponse('INVALID_PARAMETER', 'wallet_address is required', 'body must be {"wallet_address": "0x…"}')
      return s.auth.issueNonce(walletAddress)
    }, {
      parse: jsonBody(),
      body: t.Optional(t.Unknown({ description: '{"wallet_address": "0x…"}' })),
      response: { 200: NonceResponse },
      detail: { summary: 'Get a nonce to sign', description: 'Single use, valid 5 minutes. Send the signed message back in the x-wallet-address, x-signature, x-message and x-timestamp headers.' },
    })
