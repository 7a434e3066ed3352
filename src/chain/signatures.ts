// Wallet message signatures: EIP-191 personal_sign, and ERC-1271 contract wallets when an RPC is configured.
import { createPublicClient, getAddress, http, isAddress, type Hex } from 'viem'
import { workerClient } from '../lib/workers.ts'
import type { SignatureCheck } from './signature-worker.ts'
import { nativeSignatureCheck } from './native-recovery.ts'

/** What recovers signer keys (the worker loads the same module): named in the start line. */
export const signatureBackend = nativeSignatureCheck ? 'libsecp256k1' : 'viem'

export type SignatureVerifier = (address: `0x${string}`, message: string, signature: Hex) => Promise<boolean>

export function signatureVerifier(rpcUrl: string | null): SignatureVerifier {
  const client = rpcUrl ? createPublicClient({ transport: http(rpcUrl, { timeout: 10_000 }) }) : null
  // EOA signatures are checked on a worker thread (key recovery is CPU-bound); a worker failure is "not valid".
  const worker = workerClient<Omit<SignatureCheck, 'id'>, { id: number; valid: boolean }>('chain/signature-worker.ts')
  return async (address, message, signature) => {
    if ((await worker.request({ address, message, signature }).catch(() => ({ valid: false }))).valid) return true
    if (!client) return false
    try {
      return await client.verifyMessage({ address, message, signature })
    } catch {
      return false
    }
  }
}

export const checksumAddress = (address: string): `0x${string}` => getAddress(address)
export const isWalletAddress = (value: string): boolean => isAddress(value, { strict: false })
