// Where the records live: the one decision every process makes the same way (the server, the data commands,
// verify-ledger, the long-reads threads). The embedded engine, a SQLite file in the data directory, unless a
// PostgreSQL URL is configured; nothing above this file learns which engine it got.
import { join } from 'node:path'
import { openEmbeddedRecords, SchemaMismatch, type OpenMode } from './sqlite/database.ts'
import type { Records } from './stores.ts'
import { tracer } from '../lib/traces.ts'

export { SchemaMismatch, type OpenMode }
export { DatabaseUnavailable } from './records.ts'
import type { WriteOptions } from './records.ts'

/** Which records: plain data, so a thread can be told it and open its own. */
export type RecordsPlace =
  | { engine: 'sqlite'; dataDir: string }
  /**
   * `directUrl`: the same database without a pooler, when `url` goes through one (postgres/pooler.ts). `replicaUrls`:
   * its streaming replicas, read while at most `replicaMaxLagS` behind (postgres/replicas.ts).
   */
  | {
      engine: 'postgres'
      url: string
      directUrl?: string | null
      replicaUrls?: string[]
      replicaMaxLagS?: number
      pool: number
      application?: string
    }

export const databaseFile = (dataDir: string) => join(dataDir, 'trellis.db')

export const recordsPlace = (settings: {
  dataDir: string
  databaseUrl: string | null
  databaseDirectUrl?: string | null
  databaseReplicaUrls?: string[]
  replicaMaxLagS?: number
  dbPool: number
}): RecordsPlace =>
  settings.databaseUrl
    ? {
        engine: 'postgres',
        url: settings.databaseUrl,
        directUrl: settings.databaseDirectUrl ?? null,
        replicaUrls: settings.databaseReplicaUrls ?? [],
        replicaMaxLagS: settings.replicaMaxLagS,
        pool: settings.dbPool,
      }
    : { engine: 'sqlite', dataDir: settings.dataDir }

/** The records as a message names them: "the data directory ./trellis-data", "the database postgres://trellis@db/trellis". */
export async function recordsName(place: RecordsPlace): Promise<string> {
  if (place.engine === 'sqlite') return `the data directory ${place.dataDir}`
  const { shownPostgresUrl } = await import('./postgres/url.ts')
  return `the database ${shownPostgresUrl(place.url)}`
}

/**
 * The records at `place`. `assertNoIo`: fail a transaction that awaits anything but its statements (tests). `listen`:
 * hear the commits of other processes on the same database (a server on PostgreSQL; SQLite has one writer).
 */
export async function openRecords(
  place: RecordsPlace,
  mode: OpenMode,
  options: { assertNoIo?: boolean; listen?: boolean } = {},
): Promise<Records> {
  if (place.engine === 'sqlite') return inSpans(openEmbeddedRecords(databaseFile(place.dataDir), mode, options), 'sqlite')
  // Loaded only when asked for: the embedded default never loads the PostgreSQL adapter.
  const { openPostgresRecords } = await import('./postgres/open.ts')
  return inSpans(
    await openPostgresRecords(place.url, mode, place.pool, place.application, {
      listen: options.listen,
      directUrl: place.directUrl,
      replicaUrls: place.replicaUrls,
      replicaMaxLagS: place.replicaMaxLagS,
    }),
    'postgresql',
  )
}

/**
 * With traces on, each transaction, single write and snapshot is a span: a group of statements, not one span per
 * statement (a page of a feed runs dozens, and their spans would cost more than they tell). Off, the records as they are.
 */
function inSpans(records: Records, system: 'sqlite' | 'postgresql'): Records {
  const traces = tracer()
  if (traces === null) return records
  const { transact, single, snapshot } = records
  const span = <T>(name: string, work: () => Promise<T>) => traces.span(name, { 'db.system.name': system }, work, { kind: 'client' })
  return Object.assign(records, {
    transact: <T>(work: Parameters<typeof transact<T>>[0], o?: WriteOptions) => span('db transaction', () => transact(work, o)),
    single: <T>(work: Parameters<typeof single<T>>[0], o?: WriteOptions) => span('db single write', () => single(work, o)),
    snapshot: <T>(work: Parameters<typeof snapshot<T>>[0]) => span('db snapshot', () => snapshot(work)),
  })
}

/** The records of a database copy (a backup's trellis.db), read as they are. */
export const openCopy = (path: string): Records => openEmbeddedRecords(path, 'readonly')
