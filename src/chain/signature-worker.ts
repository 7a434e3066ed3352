// EIP-191 signature checks on a thread of their own: recovering a secp256k1 key in JavaScript costs about 1 ms of
// CPU, which on the event loop would cap signed requests near 700 per second.
import { verifyMessage, type Hex } from 'viem'

declare const self: Worker

export interface SignatureCheck { id: number; address: Hex; message: string; signature: Hex }

self.onmessage = async (event: MessageEvent<SignatureCheck>) => {
  const { id, address, message, signature } = event.data
  let valid = false
  try {
    valid = await verifyMessage({ address, message, signature })
  } catch {
    // a malformed signature is simply not valid
  }
  postMessage({ id, valid })
}
