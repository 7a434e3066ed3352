import { Type as t, type Static } from '@sinclair/typebox'

/**
 * The headers of a wallet-signed request, each once here for the guard, the OpenAPI document, the hot reads and the
 * MCP client: the four a signature needs, sent together, and the chain the wallet signed on (optional).
 */
export const WALLET_AUTH_HEADERS = {
  address: 'x-wallet-address',
  signature: 'x-signature',
  message: 'x-message',
  timestamp: 'x-timestamp',
} as const
export const SIGNED_HEADER_NAMES = Object.values(WALLET_AUTH_HEADERS)
export const CHAIN_ID_HEADER = 'x-chain-id'
/** The four, as prose names them: "x-wallet-address, x-signature, x-message and x-timestamp". */
export const SIGNED_HEADERS_TEXT = `${SIGNED_HEADER_NAMES.slice(0, -1).join(', ')} and ${SIGNED_HEADER_NAMES.at(-1)}`

export const NonceRequest = t.Object({ wallet_address: t.String({ description: 'your 0x address' }) })

export const Nonce = t.Object(
  {
    nonce: t.String(),
    message: t.String({
      description:
        'one line naming this server, the issue time, the nonce and the expiry: sign it with ' +
        'personal_sign and send it in x-message. The signed headers are good for one authenticated ' +
        'request, to any route, until that expiry',
    }),
    siwe_message: t.String({
      description:
        'the same sign-in as an EIP-4361 (Sign-In with Ethereum) message, which wallets show as a ' +
        'sign-in request: sign it instead of message and send its base64 in x-message (it has newlines). ' +
        'Either form signs in once',
    }),
    wallet_address: t.String(),
    expires_at: t.Integer({ description: 'Unix seconds' }),
    expiresAt: t.Integer({ description: 'Unix milliseconds (as the hosted service sends)' }),
  },
  { description: 'A nonce to sign' },
)

export const BrowserSession = t.Object(
  {
    wallet_address: t.String(),
    expires_at: t.Integer({ description: 'Unix seconds' }),
  },
  { description: 'A browser session: the wallet it stands for on reads, until when' },
)
export type BrowserSession = Static<typeof BrowserSession>

/** The header the studio's pages send their session's CSRF token in (routes/studio-writes.ts). */
export const STUDIO_CSRF_HEADER = 'x-trellis-csrf'

export const StudioSession = t.Object(
  {
    wallet_address: t.String(),
    expires_at: t.Integer({ description: 'Unix seconds: at most 12 hours after sign-in' }),
    csrf_token: t.String({ description: `send it in ${STUDIO_CSRF_HEADER} with each write of the studio's pages` }),
  },
  { description: "A studio session: the wallet whose own resources the studio's pages write without a signature, until when" },
)
export type StudioSession = Static<typeof StudioSession>
