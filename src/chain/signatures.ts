// Wallet message signatures: EIP-191 personal_sign, and ERC-1271 contract wallets when an RPC is configured.
import { createPublicClient, getAddress, http, isAddress, verifyMessage, type Hex } from 'viem'

export type SignatureVerifier = (address: `0x${string}`, message: string, signature: Hex) => Promise<boolean>

export function signatureVerifier(rpcUrl: string | null): SignatureVerifier {
  const client = rpcUrl ? createPublicClient({ transport: http(rpcUrl, { timeout: 10_000 }) }) : null
  return async (address, message, signature) => {
    try {
      if (await verifyMessage({ address, message, signature })) return true
    } catch {
      // malformed signatures fall through to "not valid"
    }
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
