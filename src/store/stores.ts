// Every store, built over one way of running statements: the records port hands the domain these, outside a
// transaction (`records.read`) or inside one (`tx`).
import type { Sql } from './query.ts'
import { walletStore, type WalletStore } from './wallets.ts'
import { nonceStore, type NonceStore } from './nonces.ts'
import { categoryStore, type CategoryStore } from './categories.ts'
import { feedStore, type FeedStore } from './feeds.ts'
import { entryStore, type EntryStore } from './entries.ts'
import { transactionStore, type TransactionStore } from './transactions.ts'
import { paymentStore, purchaseStore, type PaymentStore, type PurchaseStore } from './payments.ts'
import { imageStore, type ImageStore } from './images.ts'
import { accessLinkStore, type AccessLinkStore } from './access-links.ts'
import { passOfferStore, type PassOfferStore } from './pass-offers.ts'
import { passStore, type PassStore } from './passes.ts'
import { passFeedUrlStore, type PassFeedUrlStore } from './pass-feed-urls.ts'
import { ledgerAuditStore, type LedgerAuditStore } from './ledger-audit.ts'
import { metaStore, type MetaStore } from './meta.ts'
import { statsStore, type StatsStore } from './stats.ts'
import { inventoryStore, type InventoryStore } from './inventory.ts'
import { takedownStore, type TakedownStore } from './takedowns.ts'
import { webhookStore, type WebhookStore } from './webhooks.ts'
import { endedSessionStore, type EndedSessionStore } from './ended-sessions.ts'
import { searchStore, type SearchStore } from './search.ts'
import { websubStore, type WebsubStore } from './websub.ts'
import { analyticsStore, type AnalyticsStore } from './analytics.ts'
import type { Records as RecordsOf } from './records.ts'

export interface Stores {
  wallets: WalletStore
  nonces: NonceStore
  categories: CategoryStore
  feeds: FeedStore
  entries: EntryStore
  transactions: TransactionStore
  payments: PaymentStore
  purchases: PurchaseStore
  images: ImageStore
  accessLinks: AccessLinkStore
  passOffers: PassOfferStore
  passes: PassStore
  passFeedUrls: PassFeedUrlStore
  audit: LedgerAuditStore
  meta: MetaStore
  stats: StatsStore
  inventory: InventoryStore
  takedowns: TakedownStore
  webhooks: WebhookStore
  endedSessions: EndedSessionStore
  search: SearchStore
  websub: WebsubStore
  analytics: AnalyticsStore
}

export type Records = RecordsOf<Stores>

/**
 * The stores as any SQL engine runs them, with one writer at a time. An adapter whose engine differs (concurrent
 * writers, other statements) hands the domain these with its own overrides (store/postgres/stores.ts).
 */
export const sharedStores = (sql: Sql): Stores => ({
  wallets: walletStore(sql),
  nonces: nonceStore(sql),
  categories: categoryStore(sql),
  feeds: feedStore(sql),
  entries: entryStore(sql),
  transactions: transactionStore(sql),
  payments: paymentStore(sql),
  purchases: purchaseStore(sql),
  images: imageStore(sql),
  accessLinks: accessLinkStore(sql),
  passOffers: passOfferStore(sql),
  passes: passStore(sql),
  passFeedUrls: passFeedUrlStore(sql),
  audit: ledgerAuditStore(sql),
  meta: metaStore(sql),
  stats: statsStore(sql),
  inventory: inventoryStore(sql),
  takedowns: takedownStore(sql),
  webhooks: webhookStore(sql),
  endedSessions: endedSessionStore(sql),
  search: searchStore(sql),
  websub: websubStore(sql),
  analytics: analyticsStore(sql),
})
