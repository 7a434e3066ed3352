// The content store of a data directory: blocks in LevelDB (<data dir>/blocks), Helia's datastore beside them,
// caches under <data dir>/cache.
import { join } from 'node:path'
import { LevelDatastore } from 'datastore-level'
import { contentStore } from './helia.ts'
import { openLevelBlockSpace } from './level/block-space.ts'
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
