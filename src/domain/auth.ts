// Sign-in by wallet signature: single-use nonces, every check of DESIGN §4, atomic consumption.
import { randomBytes } from 'node:crypto'
import type { Records } from '../store/stores.ts'
import { checksumAddress, isWalletAddress, type SignatureVerifier } from '../chain/signatures.ts'
import { nowSeconds } from '../lib/clock.ts'
import { chainOfId } from '../config/networks.ts'
import { fail } from './errors.ts'
import { sessionTokens } from './sessions.ts'
import { liveSessions } from './live-sessions.ts'
import { studioSessions } from './studio-sessions.ts'
import { chainNamedIn, decodeMessage, lineMessage, onChain, readSignIn, siweMessage, type SignInPlace } from './sign-in-messages.ts'

export const NONCE_TTL_S = 300
const PAST_WINDOW_S = 300
const FUTURE_WINDOW_S = 60
const NOT_ISSUED = 'nonce is unknown, already used, or not issued for this wallet; request a new nonce'
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

export interface AuthHeaders {
  address?: string | null
  signature?: string | null
  message?: string | null
  timestamp?: string | null
  chainId?: string | null
}

export interface Signer {
  address: `0x${string}` // checksummed
  network: string | null // from x-chain-id, when known
}

function randomAlphanumeric(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting the rest keeps every character equally likely
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62]
    }
  }
  return out
}

export function authService(deps: {
  records: Records
  verify: SignatureVerifier
  place: () => SignInPlace
  /** The server key: session tokens are signed with it. */
  secret: Uint8Array
}) {
  // Nonce writes need no fsync of their own (store/nonces.ts), and no read is kept of nonces: the memo keeps its reads.
  const lazily = { durability: 'lazy', unkept: true } as const

  const tokens = sessionTokens(deps.secret)
  const sessions = liveSessions(tokens, deps.records)
  const studio = studioSessions({ records: deps.records, secret: deps.secret, origin: () => new URL(deps.place().uri).origin })
  /** A session token's session, unless it expired or was ended by sign-out. */
  const liveSession = (token: string) => sessions.get(token)

  return {
    /** `chainId`: the x-chain-id the wallet asked for; the EIP-4361 form names it when the server sells there. */
    async issueNonce(walletAddress: string, chainId: string | null = null) {
      if (!isWalletAddress(walletAddress)) {
        fail(
          'INVALID_PARAMETER',
          'wallet_address must be a 0x-prefixed Ethereum address',
          'wallet_address must be 0x followed by 40 hex characters',
        )
      }
      const address = checksumAddress(walletAddress)
      const now = nowSeconds()
      const nonce = randomAlphanumeric(32)
      const issued = { nonce, issuedAt: now, expiresAt: now + NONCE_TTL_S }
      const place = onChain(deps.place(), chainId && /^\d{1,12}$/.test(chainId.trim()) ? Number(chainId.trim()) : null)
      const message = lineMessage(place.host, issued)
      await deps.records.single(
        (tx) => tx.nonces.insert({ nonce, address_lc: address.toLowerCase(), message, expires_at: issued.expiresAt }),
        lazily,
      )
      return {
        nonce,
        message,
        siwe_message: siweMessage(place, address, issued),
        wallet_address: address,
        expires_at: issued.expiresAt,
        expiresAt: issued.expiresAt * 1000,
      }
    },

    /** Forgets nonces that expired before `cutoff`: how many. */
    purgeNonces: (cutoff: number) => deps.records.single((tx) => tx.nonces.purgeExpiredBefore(cutoff), lazily),

    /** Forgets ended sessions whose tokens expired before `cutoff` (they are refused by their expiry alone). */
    purgeEndedSessions: (cutoff: number) => deps.records.single((tx) => tx.endedSessions.purgeExpiredBefore(cutoff), { unkept: true }),

    /** Returns null when no auth header at all was sent (the caller decides if that is allowed). */
    async authenticate(h: AuthHeaders): Promise<Signer | null> {
      const present = [h.address, h.signature, h.message, h.timestamp].filter((v) => v !== undefined && v !== null && v !== '')
      if (present.length === 0) return null
      if (present.length < 4) fail('INVALID_AUTH_HEADERS', 'x-wallet-address, x-signature, x-message and x-timestamp are all required')
      const rawAddress = h.address!.trim()
      if (!isWalletAddress(rawAddress)) fail('INVALID_AUTH_HEADERS', 'x-wallet-address is not an Ethereum address')
      if (!/^0x[0-9a-fA-F]+$/.test(h.signature!)) fail('INVALID_AUTH_HEADERS', 'x-signature must be 0x-prefixed hex')
      if (!/^\d{1,16}$/.test(h.timestamp!)) fail('INVALID_AUTH_HEADERS', 'x-timestamp must be Unix seconds')
      const address = checksumAddress(rawAddress)

      const now = nowSeconds()
      let timestamp = Number(h.timestamp)
      if (timestamp > 1e12) timestamp = Math.floor(timestamp / 1000) // clients that send milliseconds
      if (timestamp < now - PAST_WINDOW_S || timestamp > now + FUTURE_WINDOW_S) {
        fail('TIMESTAMP_OUT_OF_RANGE', 'x-timestamp must be within the last 300 seconds')
      }

      const message = decodeMessage(h.message!)
      const signIn = readSignIn(message)
      if (!signIn) return fail('INVALID_NONCE', 'x-message is not a sign-in message from POST /v1/auth/nonce; request a new nonce')
      // The signed times bind on their own (whatever the nonce store still holds); then they must be the record's.
      if (signIn.expiresAt <= now) fail('NONCE_EXPIRED', 'nonce has expired')
      if (signIn.issuedAt > now + FUTURE_WINDOW_S) fail('INVALID_NONCE', 'the message was issued in the future; request a new nonce')
      // The message as issued (the record keeps the line form): a SIWE message must be exactly the one this server
      // would write for this nonce and wallet, and its record the line of the same nonce and times.
      const place = signIn.form === 'siwe' ? onChain(deps.place(), chainNamedIn(message)) : deps.place()
      if (signIn.form === 'siwe' && siweMessage(place, address, signIn) !== message) fail('INVALID_NONCE', NOT_ISSUED)
      const claim = {
        nonce: signIn.nonce,
        addressLc: address.toLowerCase(),
        message: signIn.form === 'line' ? message : lineMessage(place.host, signIn),
        expiresAt: signIn.expiresAt,
      }
      // The signature first (no statement), then one statement claims the nonce only if its record matches all of the
      // above: a forged signature never uses a nonce up, and a refused claim alone reads the record, to say why.
      if (!(await deps.verify(address, message, h.signature as `0x${string}`))) {
        fail('INVALID_SIGNATURE', 'signature does not match the wallet address')
      }
      if (!(await deps.records.single((tx) => tx.nonces.consume(claim, nowSeconds()), lazily))) {
        const record = await deps.records.read.nonces.find(signIn.nonce)
        const issued =
          record &&
          record.used_at === null &&
          record.address_lc === claim.addressLc &&
          record.message === claim.message &&
          record.expires_at === claim.expiresAt
        if (issued && record.expires_at <= nowSeconds()) fail('NONCE_EXPIRED', 'nonce has expired')
        fail('INVALID_NONCE', NOT_ISSUED)
      }
      // The chain the wallet says it signed on, named by the network table (null for a chain not in it).
      const network = h.chainId ? (chainOfId(h.chainId.trim())?.name ?? null) : null
      return { address, network }
    },

    /** A browser session for a wallet that just signed in (see sessions.ts); refused to a page of another site. */
    openSession(signer: Signer, fetchSite: string | null) {
      if (fetchSite === 'cross-site') fail('CROSS_SITE_REQUEST', 'a session is opened only by a page of this server')
      return tokens.sign(signer.address)
    },

    /** The signer a session token stands for, on reads; null when it is not a live session. */
    async sessionSigner(token: string): Promise<Signer | null> {
      const session = await liveSession(token)
      return session && { address: checksumAddress(session.address), network: null }
    },

    session: liveSession,

    /** sessionSigner's wallet without waiting (the hot route): its address, null, or undefined when only it can tell. */
    sessionAddressNow(token: string): `0x${string}` | null | undefined {
      const session = sessions.peek(token)
      return session ? session.address : session // null (not live) and undefined (unknown) kept apart
    },

    /** Sign-out: the token's session ends now, on every instance (live-sessions.ts), not at its expiry. */
    endSession: (token: string) => sessions.end(token),

    /** The studio sessions (studio-sessions.ts): the studio's writes without a signature per click. */
    studio,
  }
}
export type AuthService = ReturnType<typeof authService>
