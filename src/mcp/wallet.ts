// The operator's wallet inside the MCP process: a viem account made from the key, which signs here (sign-in messages
// for the server at --url, and x402 payment authorizations on the networks pinned) and is never sent anywhere; the
// caps on its spending; and the chain it asks when a sent authorization can be given back to the caps.
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import type { McpOptions } from '../config/mcp.ts'
import type { TrellisApi } from './api.ts'
import { authorizationCheck } from './authorizations.ts'
import { PinnedNetworks } from './networks.ts'
import { signedHeaders } from './sign-in.ts'
import { SpendingCaps, type AuthorizationCheck } from './spending.ts'

export interface OperatorWallet {
  account: PrivateKeyAccount
  caps: SpendingCaps
  networks: PinnedNetworks
  checkAuthorization: AuthorizationCheck
  /** The signature headers of one request to the server at --url (sign-in.ts refuses any other server's message). */
  signIn(): Promise<Record<string, string>>
}

type WalletOptions = Pick<McpOptions, 'maxPerCall' | 'maxPerSession' | 'networks' | 'rpcUrls'>

export function operatorWallet(key: `0x${string}`, api: TrellisApi, options: WalletOptions): OperatorWallet {
  const account = privateKeyToAccount(key)
  const networks = new PinnedNetworks(api, options.networks)
  return {
    account,
    caps: new SpendingCaps(options.maxPerCall, options.maxPerSession),
    networks,
    checkAuthorization: authorizationCheck(options.rpcUrls),
    signIn: () => signedHeaders(api, account, networks),
  }
}
