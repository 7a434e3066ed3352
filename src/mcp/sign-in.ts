// The wallet-signature headers of ONE request (a header set is single-use: its nonce is spent by the first request
// that shows it). The server hands out the message to sign, and a hostile server could hand out another server's
// message for the same wallet and replay the signature there: so nothing is signed unless it is, exactly, a Trellis
// sign-in for the server this process was pointed at (--url), for this wallet, on a network it pays on, issued now
// and short-lived. The check rebuilds the message from what it allows and compares it whole: no extra line passes.
import { parseSiweMessage } from 'viem/siwe'
import type { PrivateKeyAccount } from 'viem/accounts'
import { readSignIn, siweMessage } from '../domain/sign-in-messages.ts'
import { CHAIN_ID_HEADER, WALLET_AUTH_HEADERS as HEADER } from '../models/auth.ts'
import type { TrellisApi } from './api.ts'
import type { PinnedNetworks } from './networks.ts'

/** A message issued further from now than this (either way), or valid longer than MAX_LIFE_S, is not signed. */
const CLOCK_SKEW_S = 300
const MAX_LIFE_S = 900

export class ForeignSignIn extends Error {}

/** Why `message` is not a sign-in this wallet may sign for `base`; null when it is. */
export function foreignSignIn(message: unknown, base: string, address: string, chainIds: readonly number[], now: number): string | null {
  if (typeof message !== 'string') return 'the server gave no sign-in message'
  const issued = readSignIn(message)
  if (issued?.form !== 'siwe') return 'the server gave no Sign-In with Ethereum message'
  const siwe = parseSiweMessage(message)
  const server = new URL(base)
  if (siwe.domain !== server.host) return `the message signs in to ${JSON.stringify(siwe.domain)}, not ${server.host} (the server at --url)`
  let uri: URL | null = null
  try {
    uri = new URL(siwe.uri ?? '')
  } catch {
    // named below
  }
  if (!uri || uri.origin !== server.origin) return `the message names ${JSON.stringify(siwe.uri)}, not ${server.origin}`
  if (siwe.address?.toLowerCase() !== address.toLowerCase()) return `the message is for ${siwe.address}, not this wallet`
  if (!chainIds.includes(siwe.chainId ?? -1))
    return `the message names chain ${siwe.chainId}, not one this client pays on (${chainIds.join(', ')})`
  if (Math.abs(issued.issuedAt - now) > CLOCK_SKEW_S) return 'the message was not issued now'
  if (issued.expiresAt <= now || issued.expiresAt - issued.issuedAt > MAX_LIFE_S)
    return `the message is valid for more than ${MAX_LIFE_S} s`
  const rebuilt = siweMessage(
    { host: server.host, uri: siwe.uri!, chainId: siwe.chainId!, chainIds: [siwe.chainId!] },
    address as `0x${string}`,
    issued,
  )
  return rebuilt === message ? null : 'the message says more than a Trellis sign-in does'
}

export async function signedHeaders(
  api: TrellisApi,
  account: PrivateKeyAccount,
  networks: PinnedNetworks,
): Promise<Record<string, string>> {
  // Signed in on the first network paid on: a server selling on several names it in the message when asked.
  const chainIds = await networks.chainIds()
  const answer = await api.json<{ siwe_message?: unknown }>('/v1/auth/nonce', {
    method: 'POST',
    headers: { 'content-type': 'application/json', [CHAIN_ID_HEADER]: String(chainIds[0]) },
    body: JSON.stringify({ wallet_address: account.address }),
  })
  const now = Math.floor(Date.now() / 1000)
  const foreign = foreignSignIn(answer.siwe_message, api.base, account.address, chainIds, now)
  if (foreign !== null) throw new ForeignSignIn(`refused to sign in: ${foreign}; nothing was signed`)
  const message = answer.siwe_message as string
  return {
    [HEADER.address]: account.address,
    [HEADER.signature]: await account.signMessage({ message }),
    [HEADER.message]: Buffer.from(message, 'utf8').toString('base64'), // it has newlines: base64, as the server reads it
    [HEADER.timestamp]: String(now),
  }
}
