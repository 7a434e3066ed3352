// Signer recovery with libsecp256k1 (src/chain/native-recovery.ts) against viem's verifyMessage, which the server
// used alone before and still uses for forms the fast path leaves to it: the two must agree on every signature.
import { describe, expect, test } from 'bun:test'
import { verifyMessage, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { nativeSignatureCheck } from '../src/chain/native-recovery.ts'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n // the order of secp256k1
const hex32 = (n: bigint) => n.toString(16).padStart(64, '0')

async function viemSays(address: Hex, message: string, signature: Hex): Promise<boolean> {
  try {
    return await verifyMessage({ address, message, signature })
  } catch {
    return false
  }
}

/** The server's verdict: the fast path, and viem where the fast path declines. */
const serverSays = async (address: Hex, message: string, signature: Hex) =>
  nativeSignatureCheck!(address, message, signature) ?? (await viemSays(address, message, signature))

describe('native signature check', () => {
  test('is loaded on this platform (linux-x64 ships a prebuilt libsecp256k1)', () => {
    expect(nativeSignatureCheck).not.toBeNull()
  })

  test('agrees with viem on honest, foreign, altered and malformed signatures', async () => {
    const cases: { address: Hex; message: string; signature: Hex; valid?: boolean }[] = []
    for (let i = 0; i < 40; i++) {
      const account = privateKeyToAccount(generatePrivateKey())
      const other = privateKeyToAccount(generatePrivateKey())
      const message = `Sign in to Trellis (127.0.0.1) with nonce: ${i}\nline two ✓`
      const signature = await account.signMessage({ message })
      const r = BigInt(`0x${signature.slice(2, 66)}`)
      const s = BigInt(`0x${signature.slice(66, 130)}`)
      const v = Number.parseInt(signature.slice(130), 16)
      const withV = (value: number) => `${signature.slice(0, 130)}${value.toString(16).padStart(2, '0')}` as Hex
      cases.push(
        { address: account.address, message, signature, valid: true },
        { address: account.address.toLowerCase() as Hex, message, signature, valid: true },
        { address: other.address, message, signature, valid: false },
        { address: account.address, message: `${message}.`, signature, valid: false },
        { address: account.address, message, signature: withV(v - 27), valid: true }, // v as 0/1
        { address: account.address, message, signature: withV(v === 27 ? 28 : 27), valid: false }, // the other key
        { address: account.address, message, signature: withV(29) },
        { address: account.address, message, signature: withV(2) },
        // The malleable twin (n - s, other parity) recovers the same key in both; nonces make it single use anyway.
        { address: account.address, message, signature: `0x${hex32(r)}${hex32(N - s)}${(v === 27 ? 28 : 27).toString(16)}` as Hex },
        { address: account.address, message, signature: `0x${hex32(0n)}${hex32(s)}${v.toString(16)}` as Hex, valid: false },
        { address: account.address, message, signature: `0x${hex32(r)}${hex32(N)}${v.toString(16)}` as Hex, valid: false },
        { address: account.address, message, signature: `0x${hex32(N + 1n)}${hex32(s)}${v.toString(16)}` as Hex, valid: false },
        { address: account.address, message, signature: signature.slice(0, 130) as Hex }, // 64 bytes: viem decides
        { address: account.address, message, signature: `${signature}00` as Hex },
        { address: account.address, message, signature: `0x${signature.slice(2).toUpperCase()}` as Hex, valid: true },
      )
    }
    let nativeDecided = 0
    for (const c of cases) {
      const expected = await viemSays(c.address, c.message, c.signature)
      expect({ ...c, verdict: await serverSays(c.address, c.message, c.signature) }).toEqual({ ...c, verdict: expected })
      if (c.valid !== undefined) expect(expected).toBe(c.valid)
      if (nativeSignatureCheck!(c.address, c.message, c.signature) !== null) nativeDecided++
    }
    expect(nativeDecided).toBe(40 * 11) // the fast path decides all but the four unusual forms itself
  })
})
