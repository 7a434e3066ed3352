// Wallet message signatures: EIP-191 personal_sign, and ERC-1271 contract wallets when an RPC is configured.
import { createPublicClient, getAddress, http, isAddress, type Hex } from 'viem'
import { workerEntry } from '../lib/workers.ts'

export type SignatureVerifier = (address: `0x${string}`, message: string, signature: Hex) => Promise<boolean>

const WORKER = workerEntry('chain/signature-worker.ts')

/** EOA signatures are checked on a worker thread; one that dies is replaced at the next check. */
function offThreadCheck(): (address: Hex, message: string, signature: Hex) => Promise<boolean> {
  let worker: Worker | null = null
  let nextId = 1
  const waiting = new Map<number, (valid: boolean) => void>()
  const start = () => {
    const w = new Worker(WORKER)
    w.onmessage = (event: MessageEvent<{ id: number; valid: boolean }>) => {
      waiting.get(event.data.id)?.(event.data.valid)
      waiting.delete(event.data.id)
    }
    w.onerror = () => {
      for (const resolve of waiting.values()) resolve(false)
      waiting.clear()
      w.terminate()
      if (worker === w) worker = null
    }
    ;(w as unknown as { unref?: () => void }).unref?.() // never keeps the process alive on its own
    return w
  }
  return (address, message, signature) => {
    worker ??= start()
    const id = nextId++
    return new Promise((resolve) => {
      waiting.set(id, resolve)
      worker!.postMessage({ id, address, message, signature })
    })
  }
}

export function signatureVerifier(rpcUrl: string | null): SignatureVerifier {
  const client = rpcUrl ? createPublicClient({ transport: http(rpcUrl, { timeout: 10_000 }) }) : null
  const check = offThreadCheck()
  return async (address, message, signature) => {
    if (await check(address, message, signature)) return true
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
