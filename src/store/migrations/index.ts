// Migrations are embedded as text so the compiled binary carries them. Each engine has its own SQL for every step,
// with the same numbers and names: after the same steps both hold the same tables, columns, indexes and tallies.
import init from './sqlite/001-init.sql' with { type: 'text' }
import payments from './sqlite/002-payments.sql' with { type: 'text' }
import accessLinks from './sqlite/003-access-links.sql' with { type: 'text' }
import settlementProof from './sqlite/004-settlement-proof.sql' with { type: 'text' }
import tallies from './sqlite/005-tallies.sql' with { type: 'text' }
import readIndexes from './sqlite/006-read-indexes.sql' with { type: 'text' }
import images from './sqlite/007-images.sql' with { type: 'text' }
import contentKeys from './sqlite/008-content-keys.sql' with { type: 'text' }
import onePendingPurchase from './sqlite/009-one-pending-purchase.sql' with { type: 'text' }
import insertFirstTallies from './sqlite/010-insert-first-tallies.sql' with { type: 'text' }
import changeFeed from './sqlite/011-change-feed.sql' with { type: 'text' }
import cluster from './sqlite/012-cluster.sql' with { type: 'text' }
import takedowns from './sqlite/013-takedowns.sql' with { type: 'text' }
import webhooks from './sqlite/014-webhooks.sql' with { type: 'text' }
import webhookStanding from './sqlite/015-webhook-standing.sql' with { type: 'text' }
import endedSessions from './sqlite/016-ended-sessions.sql' with { type: 'text' }
import unheardLinkUses from './sqlite/017-unheard-link-uses.sql' with { type: 'text' }
import passOffers from './sqlite/018-pass-offers.sql' with { type: 'text' }
import ledgerKinds from './sqlite/019-ledger-kinds.sql' with { type: 'text' }
import siwxSpent from './sqlite/020-siwx-spent.sql' with { type: 'text' }
import passPurchases from './sqlite/021-pass-purchases.sql' with { type: 'text' }
import passWebhooks from './sqlite/022-pass-webhooks.sql' with { type: 'text' }
import passFeedUrls from './sqlite/023-pass-feed-urls.sql' with { type: 'text' }
import search from './sqlite/024-search.sql' with { type: 'text' }
import websub from './sqlite/025-websub.sql' with { type: 'text' }
import analytics from './sqlite/026-analytics.sql' with { type: 'text' }
import networks from './sqlite/027-networks.sql' with { type: 'text' }
import networkKeys from './sqlite/028-network-keys.sql' with { type: 'text' }
import pgInit from './postgres/001-init.sql' with { type: 'text' }
import pgPayments from './postgres/002-payments.sql' with { type: 'text' }
import pgAccessLinks from './postgres/003-access-links.sql' with { type: 'text' }
import pgSettlementProof from './postgres/004-settlement-proof.sql' with { type: 'text' }
import pgTallies from './postgres/005-tallies.sql' with { type: 'text' }
import pgReadIndexes from './postgres/006-read-indexes.sql' with { type: 'text' }
import pgImages from './postgres/007-images.sql' with { type: 'text' }
import pgContentKeys from './postgres/008-content-keys.sql' with { type: 'text' }
import pgOnePendingPurchase from './postgres/009-one-pending-purchase.sql' with { type: 'text' }
import pgInsertFirstTallies from './postgres/010-insert-first-tallies.sql' with { type: 'text' }
import pgChangeFeed from './postgres/011-change-feed.sql' with { type: 'text' }
import pgCluster from './postgres/012-cluster.sql' with { type: 'text' }
import pgTakedowns from './postgres/013-takedowns.sql' with { type: 'text' }
import pgWebhooks from './postgres/014-webhooks.sql' with { type: 'text' }
import pgWebhookStanding from './postgres/015-webhook-standing.sql' with { type: 'text' }
import pgEndedSessions from './postgres/016-ended-sessions.sql' with { type: 'text' }
import pgUnheardLinkUses from './postgres/017-unheard-link-uses.sql' with { type: 'text' }
import pgPassOffers from './postgres/018-pass-offers.sql' with { type: 'text' }
import pgLedgerKinds from './postgres/019-ledger-kinds.sql' with { type: 'text' }
import pgSiwxSpent from './postgres/020-siwx-spent.sql' with { type: 'text' }
import pgPassPurchases from './postgres/021-pass-purchases.sql' with { type: 'text' }
import pgPassWebhooks from './postgres/022-pass-webhooks.sql' with { type: 'text' }
import pgPassFeedUrls from './postgres/023-pass-feed-urls.sql' with { type: 'text' }
import pgSearch from './postgres/024-search.sql' with { type: 'text' }
import pgWebsub from './postgres/025-websub.sql' with { type: 'text' }
import pgAnalytics from './postgres/026-analytics.sql' with { type: 'text' }
import pgNetworks from './postgres/027-networks.sql' with { type: 'text' }
import pgNetworkKeys from './postgres/028-network-keys.sql' with { type: 'text' }

export interface Migration {
  version: number
  name: string
  sql: string
}

/** The steps' names, once for both engines: a step's version is its number. */
const NAMES = [
  '001-init',
  '002-payments',
  '003-access-links',
  '004-settlement-proof',
  '005-tallies',
  '006-read-indexes',
  '007-images',
  '008-content-keys',
  '009-one-pending-purchase',
  '010-insert-first-tallies',
  '011-change-feed',
  '012-cluster',
  '013-takedowns',
  '014-webhooks',
  '015-webhook-standing',
  '016-ended-sessions',
  '017-unheard-link-uses',
  '018-pass-offers',
  '019-ledger-kinds',
  '020-siwx-spent',
  '021-pass-purchases',
  '022-pass-webhooks',
  '023-pass-feed-urls',
  '024-search',
  '025-websub',
  '026-analytics',
  '027-networks',
  '028-network-keys',
]

/** One engine's steps, its SQL given in the order of NAMES. */
function steps(texts: string[]): Migration[] {
  if (texts.length !== NAMES.length) throw new Error(`${texts.length} migration texts for ${NAMES.length} steps`)
  return texts.map((sql, i) => ({ version: Number(NAMES[i]!.slice(0, 3)), name: NAMES[i]!, sql }))
}

/** The embedded engine's (SQLite). */
export const MIGRATIONS = steps([
  init,
  payments,
  accessLinks,
  settlementProof,
  tallies,
  readIndexes,
  images,
  contentKeys,
  onePendingPurchase,
  insertFirstTallies,
  changeFeed,
  cluster,
  takedowns,
  webhooks,
  webhookStanding,
  endedSessions,
  unheardLinkUses,
  passOffers,
  ledgerKinds,
  siwxSpent,
  passPurchases,
  passWebhooks,
  passFeedUrls,
  search,
  websub,
  analytics,
  networks,
  networkKeys,
])

export const POSTGRES_MIGRATIONS = steps([
  pgInit,
  pgPayments,
  pgAccessLinks,
  pgSettlementProof,
  pgTallies,
  pgReadIndexes,
  pgImages,
  pgContentKeys,
  pgOnePendingPurchase,
  pgInsertFirstTallies,
  pgChangeFeed,
  pgCluster,
  pgTakedowns,
  pgWebhooks,
  pgWebhookStanding,
  pgEndedSessions,
  pgUnheardLinkUses,
  pgPassOffers,
  pgLedgerKinds,
  pgSiwxSpent,
  pgPassPurchases,
  pgPassWebhooks,
  pgPassFeedUrls,
  pgSearch,
  pgWebsub,
  pgAnalytics,
  pgNetworks,
  pgNetworkKeys,
])

export const migrationsFor = (dialect: 'sqlite' | 'postgres'): Migration[] => (dialect === 'sqlite' ? MIGRATIONS : POSTGRES_MIGRATIONS)

/** The newest schema this binary knows: a database migrated past it was written by a newer Trellis. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** A database this binary must not use as it is: written by a newer Trellis, or not migrated yet. */
export class SchemaMismatch extends Error {}

/** Why this binary must not open a database at `version`, or null when it may (older ones are migrated). */
export function newerSchema(version: number, what: string): string | null {
  return version > SCHEMA_VERSION
    ? `${what} has schema version ${version}, newer than this Trellis knows (${SCHEMA_VERSION}): it ` +
        `was written by a newer Trellis; run that version or newer (a downgrade needs a backup taken ` +
        `before the upgrade)`
    : null
}

/** Why a database at `version` cannot be used without migrating it (newer, or older than this binary's), or null. */
export function notCurrentSchema(version: number, what: string): string | null {
  return (
    newerSchema(version, what) ??
    (version < SCHEMA_VERSION ? 'this data directory has an older schema; start the server once to migrate it' : null)
  )
}
