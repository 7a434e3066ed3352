import { Type as t } from '@sinclair/typebox'

export const NonceRequest = t.Object({ wallet_address: t.String({ description: 'your 0x address' }) })

export const Nonce = t.Object({
  nonce: t.String(),
  message: t.String({ description: 'one line naming this server, the issue time, the nonce and the expiry: sign it with personal_sign and send it in x-message. The signed headers are good for one authenticated request, to any route, until that expiry' }),
  wallet_address: t.String(),
  expires_at: t.Integer({ description: 'Unix seconds' }),
  expiresAt: t.Integer({ description: 'Unix milliseconds (as the hosted service sends)' }),
}, { description: 'A nonce to sign' })
