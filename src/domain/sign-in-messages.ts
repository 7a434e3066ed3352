// The two forms of the message a wallet signs to sign in. Both name this server, the nonce and when it was issued
// and stops being valid, so the signature itself bounds how long the headers can be used:
// - one line, which any client can send verbatim in x-message (the hosted service's SDK does exactly that);
// - EIP-4361 (Sign-In with Ethereum), which wallets show as a sign-in request, bound also to the address, this
//   chain and this server's URL; it has newlines, so it travels in x-message as base64.
import { createSiweMessage, parseSiweMessage } from 'viem/siwe'
import type { Address } from 'viem'

/** What a nonce was issued as: the nonce and its times (Unix seconds). */
export interface Issued {
  nonce: string
  issuedAt: number
  expiresAt: number
}

/** Where a sign-in is for: this server's host and URL, and its chain (the first of those it sells on). */
export interface SignInPlace {
  host: string
  uri: string
  chainId: number
  /** Every chain it sells on: a wallet may ask to sign in on any of them (x-chain-id). */
  chainIds: readonly number[]
}

/** The place with the chain a sign-in names, when it is one of the server's (else the first). */
export const onChain = (place: SignInPlace, chainId: number | null | undefined): SignInPlace =>
  chainId != null && place.chainIds.includes(chainId) ? { ...place, chainId } : place

/** The chain id an EIP-4361 message names, if any. */
export const chainNamedIn = (message: string): number | undefined => parseSiweMessage(message).chainId

const STATEMENT = 'Sign in to Trellis with this wallet.'
const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString()

export const lineMessage = (host: string, i: Issued): string =>
  `Sign in to Trellis (${host}) at ${isoTime(i.issuedAt)} with nonce: ${i.nonce}, valid until ${isoTime(i.expiresAt)}`
const LINE = /^Sign in to Trellis \(.*\) at (\S+) with nonce: ([A-Za-z0-9]{32}), valid until (\S+)$/

export const siweMessage = (place: SignInPlace, address: Address, i: Issued): string =>
  createSiweMessage({
    domain: place.host,
    address,
    statement: STATEMENT,
    uri: place.uri,
    version: '1',
    chainId: place.chainId,
    nonce: i.nonce,
    issuedAt: new Date(i.issuedAt * 1000),
    expirationTime: new Date(i.expiresAt * 1000),
  })

/** Whole Unix seconds of a time; null for anything else. */
function wholeSeconds(ms: number | undefined): number | null {
  return ms !== undefined && Number.isFinite(ms) && ms % 1000 === 0 ? ms / 1000 : null
}

/** The line form's times as it writes them (ISO, whole seconds, UTC); null for anything else. */
function secondsOf(iso: string): number | null {
  const ms = Date.parse(iso)
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? wholeSeconds(ms) : null
}

/** The nonce and signed times of a sign-in message in either form, and its form; null when it is neither. */
export function readSignIn(message: string): (Issued & { form: 'line' | 'siwe' }) | null {
  const line = LINE.exec(message)
  if (line) {
    const issuedAt = secondsOf(line[1]!)
    const expiresAt = secondsOf(line[3]!)
    return issuedAt === null || expiresAt === null ? null : { form: 'line', nonce: line[2]!, issuedAt, expiresAt }
  }
  if (!message.includes('\n')) return null
  const siwe = parseSiweMessage(message)
  const issuedAt = wholeSeconds(siwe.issuedAt?.getTime())
  const expiresAt = wholeSeconds(siwe.expirationTime?.getTime())
  if (!siwe.nonce || !/^[A-Za-z0-9]{32}$/.test(siwe.nonce) || issuedAt === null || expiresAt === null) return null
  return { form: 'siwe', nonce: siwe.nonce, issuedAt, expiresAt }
}

/** x-message is the message itself, or its base64 (a message with newlines must be). */
export function decodeMessage(raw: string): string {
  if (LINE.test(raw) || !/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) return raw
  const decoded = Buffer.from(raw, 'base64').toString('utf8')
  return /nonce: /i.test(decoded) ? decoded : raw
}
