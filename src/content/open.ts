// The content store of a data directory: blocks in LevelDB (<data dir>/blocks), Helia's datastore beside them,
// caches under <data dir>/cache. Or, for instances sharing a database, blocks in a space the records' engine hosts
// (records.blockSpaces: its database, or a bucket it indexes) with the caches still under each instance's own data
// directory.
import { join } from 'node:path'
import { MemoryDatastore } from 'datastore-core'
import { LevelDatastore } from 'datastore-level'
import { contentStore } from './helia.ts'
import { openLevelBlockSpace } from './level/block-space.ts'
import type { BlockSpace, ContentStore } from './store.ts'

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
 * The content store over a block space shared by the instances (one the records' engine hosts: its puts rely on the
 * records' commits for their durability, and it is closed with the records). A collection spares blocks written in
 * the last `gcGraceSeconds`: the longest an import may take, from its first block to the record naming it. Helia's
 * datastore is in memory: it keeps only Helia's own version mark and pins, and the content store uses no pins.
 */
export function openSharedContent(
  space: BlockSpace,
  options: { dataDir: string; gcGraceSeconds: number; fileCacheBytes?: number },
): Promise<ContentStore> {
  return contentStore({
    space,
    datastore: new MemoryDatastore(),
    cacheDir: join(options.dataDir, 'cache'),
    fileCacheBytes: options.fileCacheBytes,
    graceMs: options.gcGraceSeconds * 1000,
  })
}
