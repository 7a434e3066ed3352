// What things are called on a page when their owners gave them no name.
import type { EntryRecord, WalletRecord } from '../models/records.ts'
import { shortAddress } from './format.ts'

export const entryTitle = (entry: Pick<EntryRecord, 'title' | 'id'>): string =>
  entry.title?.trim() ? entry.title : `Untitled entry ${entry.id.slice(0, 8)}`

export const creatorName = (wallet: Pick<WalletRecord, 'username' | 'address'>): string => wallet.username ?? shortAddress(wallet.address)
