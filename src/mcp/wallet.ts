// The operator's wallet inside the MCP process: a viem account made from the key, which signs here (sign-in messages
// for the creator routes, and x402 payment authorizations) and is never sent anywhere; and the caps on its spending.
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { SpendingCaps } from './spending.ts'
import type { TrellisApi } from './api.ts'

export interface OperatorWallet {
  account: PrivateKeyAccount
  caps: SpendingCaps
}

export const operatorWallet = (key: `0x${string}`, maxPerCall: bigint, maxPerSession: bigint): OperatorWallet =>
  ({ account: privateKeyToAccount(key), caps: new SpendingCaps(maxPerCall, maxPerSession) })

/**
 * The wallet-signature headers of ONE request (a signed header set is single-use: its nonce is spent by the first
 * request that shows it): the server's sign-in message for this wallet, signed with personal_sign.
 */
export async function signedHeaders(api: TrellisApi, account: PrivateKeyAccount): Promise<Record<string, string>> {
  const nonce = await api.json<{ message: string }>('/v1/auth/nonce', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet_address: account.address }),
  })
  const signature = await account.signMessage({ message: nonce.message })
  return {
    'x-wallet-address': account.address,
    'x-signature': signature,
    'x-message': nonce.message, // one line: sent as it is
    'x-timestamp': String(Math.floor(Date.now() / 1000)),
  }
}
