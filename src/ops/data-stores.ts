// The records and the content store a data directory's configuration names, opened for the server (server.ts) and
// for the data commands that run without one (cli.ts, migrate-to-postgres.ts). Here, below the composition root
// (app.ts builds the services over what this opens, and never the other way), so that ops and app import each other in
// one direction only.
import type { Config } from '../config.ts'
import { openRecords, recordsPlace } from '../store/open.ts'
import type { Records } from '../store/stores.ts'
import type { ContentStore } from '../content/store.ts'
import { openContent, openSharedContent } from '../content/open.ts'
import { moderationService } from '../domain/moderation.ts'
import type { DataAccess } from './data.ts'

/** Tests (and a source run with test hooks) fail a transaction that awaits anything but its statements (store/sqlite/records.ts). */
const checksTransactions = (config: Config) => config.testHooks.allowed || process.env.NODE_ENV === 'test'

/**
 * The configured records (the data directory's, or PostgreSQL's), migrated to this binary's schema (a newer one is
 * refused). `listen`: a server's, which hears other instances' commits on the same database.
 */
export const openDataRecords = (config: Config, options: { listen?: boolean } = {}): Promise<Records> =>
  openRecords(recordsPlace(config), 'migrate', { assertNoIo: checksTransactions(config), listen: options.listen })

/**
 * The configured content store: LevelDB in the data directory, or a block space the records host (their database, or
 * an S3 bucket indexed there); `records` closes after it.
 */
export async function openDataContent(config: Config, records: Records | null): Promise<ContentStore> {
  try {
    if (config.content !== 'leveldb') {
      const spaces = records?.blockSpaces
      if (!spaces) throw new Error('content beside the records needs records that host it (PostgreSQL), opened first')
      const space = config.content === 'postgres' ? await spaces.inDatabase() : await spaces.inBucket(config.content)
      return await openSharedContent(space, { dataDir: config.dataDir, gcGraceSeconds: config.gcGraceS })
    }
    return await openContent(config.dataDir)
  } catch (error) {
    throw new Error(`cannot open the content store: ${(error as Error).message}`)
  }
}

/** `work` on the records and content `config` names, opened for a data command; both closed after, however it ends. */
export async function withDataStores<T>(config: Config, work: (records: Records, content: ContentStore) => Promise<T>): Promise<T> {
  await using opened = new AsyncDisposableStack()
  const records = await openDataRecords(config)
  opened.defer(() => records.close())
  const content = await openDataContent(config, records)
  opened.defer(() => content.close())
  return await work(records, content)
}

/** The data commands' view of a data directory no server holds: they run here, on this thread. */
export const commandDataAccess = (config: Config, records: Records, content: ContentStore): DataAccess => ({
  dataDir: config.dataDir,
  content,
  cids: () => records.read.inventory.namedCids(),
  copyTo: (path) => records.upkeep.copyTo(path),
  integrity: () => records.upkeep.integrity(),
  inconsistencies: () => records.snapshot((view) => view.audit.inconsistencies()),
  secret: () => records.secret(),
  lease: (name) => records.lease(name),
  moderation: moderationService({ records }),
})
