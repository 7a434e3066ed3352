// An x402 facilitator on loopback (/verify, /settle, /supported) backed by @x402's real in-process facilitator and
// its own gas account, whose /settle answer a test can make lie. It can demand credentials as hosted facilitators
// do: a static bearer token, or a CDP-style JWT per call, checked with jose against the key's public half.
import { createWalletClient, http, publicActions, type Hex } from 'viem'
import { decodeProtectedHeader, jwtVerify, type CryptoKey, type KeyObject } from 'jose'
import { privateKeyToAccount } from 'viem/accounts'
import { x402Facilitator } from '@x402/core/facilitator'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator'
import type { TestChain } from '../../dev/chain.ts'

/**
 * What /settle does: `before` runs first (a front-runner's move), then the real settlement unless `settle` is false,
 * then `answer` is sent, given the real settlement's answer (null when not settled).
 */
export type SettleBehaviour = { settle: boolean; before?: () => Promise<void>; answer: (settled: any | null, body: any) => Response }

export const honest: SettleBehaviour = { settle: true, answer: (settled) => Response.json(settled) }

export type FacilitatorCredentials =
  | { bearer: string }
  /** CDP: a JWT per request signed by the API key `keyId`, bound to that request's method, host and path. */
  | { cdp: { keyId: string; publicKey: CryptoKey | KeyObject } }

export interface FacilitatorOptions {
  requires?: FacilitatorCredentials
  /** Where the facilitator's routes live (CDP's are under /platform/v2/x402). */
  basePath?: string
}

/** Why a request's credentials are refused, or null when they are good. */
async function refusal(request: Request, requires: FacilitatorCredentials): Promise<string | null> {
  const token = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1]
  if (!token) return 'no bearer token'
  if ('bearer' in requires) return token === requires.bearer ? null : 'wrong token'
  try {
    const header = decodeProtectedHeader(token)
    if (header.kid !== requires.cdp.keyId || typeof header.nonce !== 'string' || header.nonce.length < 16) return 'bad JWT header'
    const { payload } = await jwtVerify(token, requires.cdp.publicKey, {
      issuer: 'cdp',
      subject: requires.cdp.keyId,
      requiredClaims: ['nbf', 'exp'],
    })
    if (payload.exp! - payload.nbf! > 120) return 'JWT lives too long'
    const url = new URL(request.url)
    const uris = payload.uris as unknown
    if (!Array.isArray(uris) || !uris.includes(`${request.method} ${url.host}${url.pathname}`))
      return `JWT not for ${request.method} ${url.pathname}`
    return null
  } catch (error) {
    return `JWT refused: ${(error as Error).message}`
  }
}

export function startFacilitator(chain: TestChain, key: Hex, options: FacilitatorOptions = {}) {
  const account = privateKeyToAccount(key)
  const wallet = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) }).extend(publicActions)
  const facilitator = registerExactEvmScheme(new x402Facilitator(), {
    signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never),
    networks: `eip155:${chain.chainId}`,
  })
  let behaviour = honest
  const calls: string[] = []
  /** Each call's path and the traceparent it came with ('-' for none): "/settle 00-…". */
  const traceparents: string[] = []
  /** Requests refused for their credentials, with the reason. */
  const refused: string[] = []
  const basePath = options.basePath ?? ''
  const service = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const full = new URL(request.url).pathname
      if (!full.startsWith(`${basePath}/`)) return new Response('not found', { status: 404 })
      const path = full.slice(basePath.length)
      if (options.requires) {
        const why = await refusal(request, options.requires)
        if (why) {
          refused.push(`${path}: ${why}`)
          return Response.json({ error: 'unauthorized', message: why }, { status: 401 })
        }
      }
      calls.push(path)
      traceparents.push(`${path} ${request.headers.get('traceparent') ?? '-'}`)
      if (path === '/supported') return Response.json(await facilitator.getSupported())
      const body = await request.json()
      if (path === '/verify') return Response.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements))
      if (path === '/settle') {
        await behaviour.before?.()
        const settled = behaviour.settle ? await facilitator.settle(body.paymentPayload, body.paymentRequirements) : null
        return behaviour.answer(settled, body)
      }
      return new Response('not found', { status: 404 })
    },
  })
  return {
    url: `http://127.0.0.1:${service.port}${basePath}`,
    calls,
    traceparents,
    refused,
    behave(next: SettleBehaviour) {
      behaviour = next
    },
    stop: () => service.stop(true),
  }
}
