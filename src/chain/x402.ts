// Verifying and settling x402 'exact' payments (v1 and v2) with @x402/core's facilitator and @x402/evm's exact EVM
// scheme: in process with our relayer wallet (`local`), or over HTTP at a facilitator (`facilitator`). Also the
// on-chain reads that reconcile a payment interrupted between settlement and recording.
import { createPublicClient, createWalletClient, http, parseAbi, parseAbiItem, publicActions, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createNonceManager, jsonRpc } from 'viem/nonce'
import { x402Facilitator } from '@x402/core/facilitator'
import { HTTPFacilitatorClient } from '@x402/core/server'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator'
import type { Config } from '../config.ts'

export interface VerifyResult { isValid: boolean; invalidReason?: string; payer?: string }
export interface SettleResult { success: boolean; errorReason?: string; transaction: string; network: string; payer?: string }

export interface PaymentEngine {
  verify(payload: unknown, requirements: unknown): Promise<VerifyResult>
  settle(payload: unknown, requirements: unknown): Promise<SettleResult>
  /** EIP-3009 authorizationState: true once the authorization was used on chain. */
  authorizationUsed(from: Hex, nonce: Hex): Promise<boolean>
  /** The hash of the transaction that used the authorization, from its AuthorizationUsed event. */
  findSettlement(from: Hex, nonce: Hex): Promise<Hex | null>
}

const USDC_ABI = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)'])
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)')
const LOG_LOOKBACK_BLOCKS = 50_000n

/** Facilitator errors can be multi-line viem dumps: keep one short line. */
export function shortReason(reason: string | undefined, fallback: string): string {
  if (!reason) return fallback
  const known = /authorization is used or canceled|transfer amount exceeds balance|authorization is expired|authorization is not yet valid|invalid signature/i.exec(reason)
  if (known) return known[0].toLowerCase().replace(/ /g, '_')
  const line = reason.split('\n').map((l) => l.trim()).find(Boolean) ?? fallback
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}

export function paymentEngine(config: Config): PaymentEngine {
  const transport = http(config.network.rpcUrl, { timeout: 30_000, retryCount: 1 })
  const publicClient = createPublicClient({ transport, pollingInterval: 250 })
  let facilitator: { verify(p: unknown, r: unknown): Promise<unknown>; settle(p: unknown, r: unknown): Promise<unknown> }

  if (config.settlement === 'local') {
    if (!config.relayerKey) throw new Error('TRELLIS_SETTLEMENT=local needs TRELLIS_RELAYER_KEY (the wallet that pays gas)')
    // Parallel settlements need distinct transaction nonces: a nonce manager per relayer account.
    const account = privateKeyToAccount(config.relayerKey as Hex, { nonceManager: createNonceManager({ source: jsonRpc() }) })
    const wallet = createWalletClient({ account, transport, pollingInterval: 250 }).extend(publicActions)
    const signer = toFacilitatorEvmSigner({ ...wallet, address: account.address } as never)
    facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: `eip155:${config.network.chainId}` }) as never
  } else {
    facilitator = new HTTPFacilitatorClient({ url: config.facilitatorUrl, timeoutMs: 60_000 }) as never
  }

  return {
    async verify(payload, requirements) {
      try {
        return (await facilitator.verify(payload, requirements)) as VerifyResult
      } catch (error) {
        return { isValid: false, invalidReason: shortReason((error as Error).message, 'verification_failed') }
      }
    },
    async settle(payload, requirements) {
      try {
        const result = (await facilitator.settle(payload, requirements)) as SettleResult
        return result.success ? result : { ...result, errorReason: shortReason(result.errorReason, 'settlement_failed') }
      } catch (error) {
        return { success: false, transaction: '', network: config.network.name, errorReason: shortReason((error as Error).message, 'settlement_failed') }
      }
    },
    authorizationUsed: (from, nonce) =>
      publicClient.readContract({ address: config.network.usdcAddress, abi: USDC_ABI, functionName: 'authorizationState', args: [from, nonce] }),
    async findSettlement(from, nonce) {
      const latest = await publicClient.getBlockNumber({ cacheTime: 0 })
      const logs = await publicClient.getLogs({
        address: config.network.usdcAddress,
        event: AUTHORIZATION_USED,
        args: { authorizer: from, nonce },
        fromBlock: latest > LOG_LOOKBACK_BLOCKS ? latest - LOG_LOOKBACK_BLOCKS : 0n,
        toBlock: latest,
      })
      return logs[0]?.transactionHash ?? null
    },
  }
}
