// The content store of a data directory: blocks in LevelDB (<data dir>/blocks), Helia's datastore beside them,
// caches under <data dir>/cache. Or, for instances sharing a database, blocks in PostgreSQL with the caches still
// under each instance's own data directory.
import { join } from 'node:path'
import type { SQL } from 'bun'
import { MemoryDatastore } from 'datastore-core'
import { LevelDatastore } from 'datastore-level'
import { contentStore } from './helia.ts'
import { openLevelBlockSpace } from './level/block-space.ts'
import { openPostgresBlockSpace } from './postgres/block-space.ts'
import type { ContentStore } from './store.ts'

export async function openContent(dataDir: string, options: { fileCacheBytes?: number } = {}): Promise<ContentStore> {
  const space = await openLevelBlockSpace(join(dataDir, 'blocks'))
  const datastore = new LevelDatastore(join(dataDir, 'datastore'))
  let store: ContentStore
  try {
    await datastore.open()
    store = await contentStore({ space, datastore, cacheDir: join(dataDir, 'cache'), fileCacheBytes: options.fileCacheBytes })
  } catch (error) {
    await datastore.close().catch(() => {})
    await space.close()
    throw error
  }
  return {
    ...store,
    async close() {
      await store.close()
      await space.close()
      await datastore.close()
    },
  }
}

/**
 * The content store on PostgreSQL, in the records' own database `sql` (its block puts rely on the records' commits
 * for their durability; its close() leaves `sql` to the caller). A collection spares blocks written in
 * the last `gcGraceSeconds`: the longest an import may take, from its first block to the record naming it. Helia's
 * datastore is in memory: it keeps only Helia's own version mark and pins, and the content store uses no pins.
 */
export async function openPostgresContent(sql: SQL, options: { dataDir: string; gcGraceSeconds: number; fileCacheBytes?: number }): Promise<ContentStore> {
  const space = await openPostgresBlockSpace(sql)
  return contentStore({
    space,
    datastore: new MemoryDatastore(),
    cacheDir: join(options.dataDir, 'cache'),
    fileCacheBytes: options.fileCacheBytes,
    graceMs: options.gcGraceSeconds * 1000,
  })
}
