// A payer who front-runs his own authorization (payments-hostile, pass-payments-hostile): the honest transfer he
// presents and a sneaky one of the same nonce, and a third party with gas (buyers hold none) who sends the payer's
// own transfer or cancellation to the chain, as anyone holding it may, and waits for it to be mined.
import { expect } from 'bun:test'
import { createWalletClient, http, parseAbi, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { devKey, encodePaymentHeader, usdcAbi, type Buyer, type TestChain } from '../../dev/chain.ts'

export type Authorization = Awaited<ReturnType<TestChain['sign']>>

/** An authorization as an X-PAYMENT header of x402 v1 on `network`. */
export const v1Header = (payload: Authorization, network = 'base-sepolia') =>
  encodePaymentHeader({ x402Version: 1, scheme: 'exact', network, payload })

/** The buyer's authorization on `chain` to pay `to`, and another of the same nonce sending 1 unit to himself. */
export async function honestAndSneaky(chain: Pick<TestChain, 'sign'>, buyer: Buyer, to: Address, value: bigint) {
  const honest = await chain.sign(buyer, { to, value })
  const sneaky = await chain.sign(buyer, { to: buyer.address, value: 1n, nonce: honest.authorization.nonce })
  return { honest, sneaky }
}

const cancelAbi = parseAbi(['function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)'])

/** The third party, on `chain`'s dev key 3. */
export function frontRunner(chain: TestChain) {
  const client = createWalletClient({ account: privateKeyToAccount(devKey(3)), chain: chain.chain, transport: http(chain.rpcUrl) })
  const mined = async (hash: Hex) => expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
  return {
    /** The payer's transferWithAuthorization, submitted straight to the chain. */
    async submitDirectly(auth: Authorization) {
      const a = auth.authorization
      const args = [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, auth.signature] as const
      await mined(await client.writeContract({ address: chain.usdc, abi: usdcAbi, functionName: 'transferWithAuthorization', args }))
    },

    /** The payer cancels the authorization (EIP-3009 cancelAuthorization) before it is used. */
    async cancelDirectly(buyer: Buyer, nonce: Hex) {
      const signature = await buyer.signTypedData({
        domain: { name: 'USDC', version: '2', chainId: chain.chainId, verifyingContract: chain.usdc },
        types: {
          CancelAuthorization: [
            { name: 'authorizer', type: 'address' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'CancelAuthorization',
        message: { authorizer: buyer.address, nonce },
      })
      const args = [buyer.address, nonce, signature] as const
      await mined(await client.writeContract({ address: chain.usdc, abi: cancelAbi, functionName: 'cancelAuthorization', args }))
    },
  }
}
export type FrontRunner = ReturnType<typeof frontRunner>
