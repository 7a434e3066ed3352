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

export interface Migration { version: number; name: string; sql: string }

/** The embedded engine's (SQLite). */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: '001-init', sql: init },
  { version: 2, name: '002-payments', sql: payments },
  { version: 3, name: '003-access-links', sql: accessLinks },
  { version: 4, name: '004-settlement-proof', sql: settlementProof },
  { version: 5, name: '005-tallies', sql: tallies },
  { version: 6, name: '006-read-indexes', sql: readIndexes },
  { version: 7, name: '007-images', sql: images },
  { version: 8, name: '008-content-keys', sql: contentKeys },
  { version: 9, name: '009-one-pending-purchase', sql: onePendingPurchase },
  { version: 10, name: '010-insert-first-tallies', sql: insertFirstTallies },
]

export const POSTGRES_MIGRATIONS: Migration[] = [
  { version: 1, name: '001-init', sql: pgInit },
  { version: 2, name: '002-payments', sql: pgPayments },
  { version: 3, name: '003-access-links', sql: pgAccessLinks },
  { version: 4, name: '004-settlement-proof', sql: pgSettlementProof },
  { version: 5, name: '005-tallies', sql: pgTallies },
  { version: 6, name: '006-read-indexes', sql: pgReadIndexes },
  { version: 7, name: '007-images', sql: pgImages },
  { version: 8, name: '008-content-keys', sql: pgContentKeys },
  { version: 9, name: '009-one-pending-purchase', sql: pgOnePendingPurchase },
  { version: 10, name: '010-insert-first-tallies', sql: pgInsertFirstTallies },
]

export const migrationsFor = (dialect: 'sqlite' | 'postgres'): Migration[] => (dialect === 'sqlite' ? MIGRATIONS : POSTGRES_MIGRATIONS)

/** The newest schema this binary knows: a database migrated past it was written by a newer Trellis. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** A database this binary must not use as it is: written by a newer Trellis, or not migrated yet. */
export class SchemaMismatch extends Error {}

/** Why this binary must not open a database at `version`, or null when it may (older ones are migrated). */
export function newerSchema(version: number, what: string): string | null {
  return version > SCHEMA_VERSION
    ? `${what} has schema version ${version}, newer than this Trellis knows (${SCHEMA_VERSION}): it was written by a newer Trellis; run that version or newer (a downgrade needs a backup taken before the upgrade)`
    : null
}

/** Why a database at `version` cannot be used without migrating it (newer, or older than this binary's), or null. */
export function notCurrentSchema(version: number, what: string): string | null {
  return newerSchema(version, what) ?? (version < SCHEMA_VERSION ? 'this data directory has an older schema; start the server once to migrate it' : null)
}
