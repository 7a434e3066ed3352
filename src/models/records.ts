// What the stores hand up: typed records (booleans, arrays, bigint money) derived from the wire models, so a layer
// above never sees a column's storage form (0/1, JSON text, money as text).
import type { Feed } from './feed.ts'
import type { Entry } from './entry.ts'
import type { Wallet } from './wallet.ts'
import type { Category } from './category.ts'
import type { AccessLink } from './access-link.ts'
import type { PassOffer } from './pass.ts'
import type { Transaction } from './transaction.ts'
import type { Takedown } from './moderation.ts'
import type { Webhook, WebhookDelivery } from './webhook.ts'

/** `taken_down`: by the operator (domain/moderation.ts); never on the wire. */
export type FeedRecord = Omit<Feed, 'total_revenue' | 'pass'> & {
  total_revenue: bigint
  taken_down: boolean
  /** The pass on sale: null when none is, or the feed is inactive. */
  pass: PassOfferRecord | null
}

export type PassOfferRecord = Omit<PassOffer, 'price'> & { price: bigint }

/** A pass sold: its holder by address (lower case), running from starts_at to expires_at. */
export interface PassRecord {
  id: string
  feed_id: string
  holder_lc: string
  starts_at: number
  expires_at: number
  transaction_id: string
  created_at: number
}

/** A pass holder's private feed URL: standing until `revoked_at` (its token is made from `id`, never stored). */
export interface PassFeedUrlRecord {
  id: string
  feed_id: string
  holder_lc: string
  created_at: number
  revoked_at: number | null
}

/** `is_free` is the stored flag; on the wire an entry whose early access has ended is free too (isFreeNow). */
export type EntryRecord = Omit<Entry, 'content_url' | 'asset' | 'price' | 'total_revenue'> & {
  size: number
  price: bigint
  total_revenue: bigint
  taken_down: boolean
}

export type WalletRecord = Omit<Wallet, 'wallet_address' | 'wallet_address_network' | 'total_revenue'> & { total_revenue: bigint }

export type CategoryRecord = Category

export type AccessLinkRecord = Omit<AccessLink, 'access_token' | 'access_url' | 'url'> & { created_by: string; updated_at: number }

/** `id` without the tx_ prefix the wire adds. */
export type TransactionRecord = Omit<Transaction, 'amount'> & { amount: bigint }

export interface ImageRecord {
  cid: string
  mime_type: string
  size: number
  created_at: number
}

/**
 * `target_id`: the feed or the entry taken down (on the wire, entry_id is set for an entry only). `was_active`: a
 * feed's is_active then; an entry's: whether it was active, or would be once its feed is (deleted with it).
 */
export type TakedownRecord = Omit<Takedown, 'entry_id'> & { target_id: string; was_active: boolean }

export type WebhookEndpointRecord = Webhook & { wallet_id: string }

export type DeliveryStatus = WebhookDelivery['status']

/**
 * `subject_id`: the ledger row of a sale, the entry of an expiry, the pass sold or ended. `next_attempt_at` is also
 * its sender's claim on it.
 */
export type WebhookDeliveryRecord = Omit<WebhookDelivery, 'next_attempt_at'> & {
  endpoint_id: string
  subject_id: string
  next_attempt_at: number
}
