// A small HTTP client for tests: real viem wallets sign real nonce messages. The target is a server's base URL, or
// an app answering in process (see in-process.ts): the same requests either way.
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

/** An app that answers requests in this process, addressed as `url`. */
export interface InProcess {
  url: string
  handle(request: Request): Promise<Response>
}
export type Target = string | InProcess

function send(target: Target, path: string, init: RequestInit): Promise<Response> {
  if (typeof target === 'string') return fetch(`${target}${path}`, init)
  return target.handle(new Request(`${target.url}${path}`, init))
}

export type Wallet = PrivateKeyAccount

export const newWallet = (): Wallet => privateKeyToAccount(generatePrivateKey())

export interface Reply<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

/** Fetches a nonce for the wallet and signs it: the four auth headers (+ x-chain-id). */
export async function authHeaders(url: Target, wallet: Wallet, chainId = '84532'): Promise<Record<string, string>> {
  const nonce = await send(url, '/v1/auth/nonce', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet_address: wallet.address }),
  }).then((r) => r.json() as Promise<{ message: string }>)
  const signature = await wallet.signMessage({ message: nonce.message })
  return {
    'x-wallet-address': wallet.address,
    'x-signature': signature,
    'x-message': nonce.message,
    'x-timestamp': String(Math.floor(Date.now() / 1000)),
    'x-chain-id': chainId,
  }
}

export async function call<T = any>(
  url: Target,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; wallet?: Wallet; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(options.headers ?? {}) }
  if (options.wallet) Object.assign(headers, await authHeaders(url, options.wallet))
  const response = await send(url, path, {
    method,
    headers,
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  })
  const text = await response.text()
  let body: any = text
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** Asserts an error answer: its status and shape-A code. */
export function expectError(reply: Reply, status: number, code: string): void {
  if (reply.status !== status || reply.body?.code !== code)
    throw new Error(`expected ${status} ${code}, got ${reply.status} ${reply.text.slice(0, 300)}`)
  if (typeof reply.body.error !== 'string') throw new Error(`error body without an error message: ${reply.text}`)
}

export const b64 = (data: string | Uint8Array) => Buffer.from(data).toString('base64')

/** Creates a feed as `wallet`, failing the test if it does not answer 201. */
export async function createFeed(url: Target, wallet: Wallet, body: Record<string, unknown> = {}) {
  const reply = await call(url, 'POST', '/v1/feeds', { wallet, body: { name: 'A feed', ...body } })
  if (reply.status !== 201) throw new Error(`create feed: ${reply.status} ${reply.text}`)
  return reply.body
}

export async function createEntry(url: Target, wallet: Wallet, feedId: string, body: Record<string, unknown> = {}) {
  const reply = await call(url, 'POST', `/v1/feeds/${feedId}/entries`, {
    wallet,
    body: { content_base64: b64('hello'), mime_type: 'text/plain', ...body },
  })
  if (reply.status !== 201) throw new Error(`create entry: ${reply.status} ${reply.text}`)
  return reply.body
}

/**
 * A PAYMENT-REQUIRED header decoded, without what each 402 draws afresh (sign-in-with-x's nonce and times): two
 * answers for one resource compare equal on the rest.
 */
export function challengeOf(header: string | null): Record<string, any> | null {
  if (header === null) return null
  const challenge = JSON.parse(Buffer.from(header, 'base64').toString())
  const info = challenge.extensions?.['sign-in-with-x']?.info
  if (info) for (const fresh of ['nonce', 'issuedAt', 'expirationTime']) delete info[fresh]
  return challenge
}
