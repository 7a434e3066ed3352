// EIP-191 signature checks on a thread of their own: recovering a secp256k1 key costs CPU time, natively and more so
// in JavaScript (the fallback), that the event loop spends on other requests instead.
import { verifyMessage, type Hex } from 'viem'
import { nativeSignatureCheck } from './native-recovery.ts'

declare const self: Worker

export interface SignatureCheck {
  id: number
  address: Hex
  message: string
  signature: Hex
}

self.onmessage = async (event: MessageEvent<SignatureCheck>) => {
  const { id, address, message, signature } = event.data
  let valid = false
  try {
    valid = nativeSignatureCheck?.(address, message, signature) ?? (await verifyMessage({ address, message, signature }))
  } catch {
    // a malformed signature is simply not valid
  }
  postMessage({ id, valid })
}
