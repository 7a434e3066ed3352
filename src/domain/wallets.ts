// Wallet profiles: looked up by id or by address in any letter case.
import type { WalletRow, WalletStore } from '../store/wallets.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { isUuid } from '../lib/ids.ts'
import { fail } from './errors.ts'

export function walletService(d: { wallets: WalletStore }) {
  return {
    byId(id: string): WalletRow {
      if (!isUuid(id)) fail('INVALID_WALLET_ID', 'invalid wallet id', 'wallet_id must be a UUID')
      return d.wallets.byId(id.toLowerCase()) ?? fail('WALLET_NOT_FOUND', 'wallet not found')
    },
    byAddress(address: string): WalletRow {
      if (!isWalletAddress(address)) fail('INVALID_PARAMETER', 'invalid wallet address', 'address must be 0x followed by 40 hex characters')
      return d.wallets.byAddress(address) ?? fail('WALLET_NOT_FOUND', 'wallet not found')
    },
  }
}
export type WalletService = ReturnType<typeof walletService>
