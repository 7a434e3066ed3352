// EIP-191 signature checks with libsecp256k1 (the `secp256k1` package's native addon), several times faster than
// viem's JavaScript. Where the addon has no prebuilt binary for the platform, `nativeSignatureCheck` is null and viem
// does the work.
import { hashMessage, hexToBytes, isHex, type Hex } from 'viem'
import { publicKeyToAddress } from 'viem/utils'

interface Secp256k1 {
  ecdsaRecover(signature: Uint8Array, recoveryId: number, hash: Uint8Array, compressed: boolean): Uint8Array
}

function loadAddon(): Secp256k1 | null {
  try {
    // './bindings' is the addon alone: the package's main falls back to a JavaScript curve we do not want.
    return require('secp256k1/bindings') as Secp256k1
  } catch {
    return null
  }
}

const addon = loadAddon()

/**
 * True or false for a 65-byte r‖s‖v signature (v is 0, 1, 27 or 28); null for any other form, which viem then
 * judges (it knows more encodings than this fast path needs to).
 */
export const nativeSignatureCheck =
  addon &&
  ((address: Hex, message: string, signature: Hex): boolean | null => {
    if (!isHex(signature) || signature.length !== 132) return null
    const bytes = hexToBytes(signature)
    const v = bytes[64]!
    const recoveryId = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1
    if (recoveryId < 0) return null
    try {
      const publicKey = addon.ecdsaRecover(bytes.subarray(0, 64), recoveryId, hashMessage(message, 'bytes'), false)
      return publicKeyToAddress(`0x${Buffer.from(publicKey).toString('hex')}`).toLowerCase() === address.toLowerCase()
    } catch {
      return false // r or s out of range, or no point: recovery fails, as it does in viem
    }
  })
