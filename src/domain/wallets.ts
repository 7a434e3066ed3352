// Wallet profiles: looked up by id or by address in any letter case.
import type { Records } from '../store/stores.ts'
import type { WalletRecord } from '../models/records.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { isUuid } from '../lib/ids.ts'
import { fail } from './errors.ts'
import type { Signer } from './auth.ts'
import { nowSeconds } from '../lib/clock.ts'
import { NUL } from '../lib/text.ts'

const USERNAME = /^[A-Za-z0-9]{3,50}$/

function validPictureUrl(value: string): boolean {
  // The URL parser would percent-encode a NUL; the value is stored as given, and no text column may hold one.
  if (value.length > 2048 || value.includes(NUL)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

export function walletService(d: { records: Records }) {
  const wallets = d.records.read.wallets
  async function byId(id: string): Promise<WalletRecord> {
    if (!isUuid(id)) fail('INVALID_WALLET_ID', 'invalid wallet id', 'wallet_id must be a UUID')
    return (await wallets.byId(id.toLowerCase())) ?? fail('WALLET_NOT_FOUND', 'wallet not found')
  }
  return {
    byId,
    /** A wallet updates only itself: username (unique, any case) and picture_url. */
    async update(signer: Signer, id: string, patch: { username?: unknown; picture_url?: unknown }): Promise<WalletRecord> {
      const wallet = await byId(id)
      if (wallet.address.toLowerCase() !== signer.address.toLowerCase())
        fail('UNAUTHORIZED_WALLET_UPDATE', 'a wallet can update only itself')
      const changes: { username?: string | null; picture_url?: string | null } = {}
      if (patch.username !== undefined) {
        if (patch.username !== null && (typeof patch.username !== 'string' || !USERNAME.test(patch.username))) {
          fail('INVALID_USERNAME', 'invalid username', 'username must be 3-50 alphanumeric characters (a-z, A-Z, 0-9)')
        }
        changes.username = patch.username as string | null
      }
      if (patch.picture_url !== undefined) {
        if (patch.picture_url !== null && (typeof patch.picture_url !== 'string' || !validPictureUrl(patch.picture_url))) {
          fail('INVALID_PICTURE_URL', 'invalid picture_url', 'picture_url must be a valid http or https URL')
        }
        changes.picture_url = patch.picture_url as string | null
      }
      if (!(await d.records.transact((tx) => tx.wallets.update(wallet.id, changes, nowSeconds()))))
        fail('USERNAME_CONFLICT', 'username is already taken')
      return (await wallets.byId(wallet.id))!
    },
    async byAddress(address: string): Promise<WalletRecord> {
      if (!isWalletAddress(address)) fail('INVALID_PARAMETER', 'invalid wallet address', 'address must be 0x followed by 40 hex characters')
      return (await wallets.byAddress(address)) ?? fail('WALLET_NOT_FOUND', 'wallet not found')
    },
  }
}
export type WalletService = ReturnType<typeof walletService>
