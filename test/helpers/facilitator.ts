// An x402 facilitator on loopback (/verify, /settle, /supported) backed by @x402's real in-process facilitator and
// its own gas account, whose /settle answer a test can make lie.
import { createWalletClient, http, publicActions, type Hex } from 'viem'
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

export function startFacilitator(chain: TestChain, key: Hex) {
  const account = privateKeyToAccount(key)
  const wallet = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) }).extend(publicActions)
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer: toFacilitatorEvmSigner({ ...wallet, address: account.address } as never), networks: 'eip155:84532' })
  let behaviour = honest
  const calls: string[] = []
  const service = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const path = new URL(request.url).pathname
      calls.push(path)
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
    url: `http://127.0.0.1:${service.port}`,
    calls,
    behave(next: SettleBehaviour) {
      behaviour = next
    },
    stop: () => service.stop(true),
  }
}
