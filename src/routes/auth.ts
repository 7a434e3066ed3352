// /v1/auth: nonces to sign.
import { Elysia } from 'elysia'
import { Nonce, NonceRequest } from '../models/index.ts'
import type { Services } from './services.ts'
import { jsonBody } from '../edge/body.ts'

export const authRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/auth', tags: ['Authentication'] })
    .post('/nonce', ({ body }) => s.auth.issueNonce(body.wallet_address), {
      parse: jsonBody(),
      body: NonceRequest,
      response: { 200: Nonce },
      detail: { summary: 'Get a nonce to sign', description: 'Single use, valid 5 minutes. Send the signed message back in the x-wallet-address, x-signature, x-message and x-timestamp headers.' },
    })
