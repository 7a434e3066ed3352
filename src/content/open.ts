// The content store of a data directory: blocks in LevelDB (<data dir>/blocks), Helia's datastore beside them,
// caches under <data dir>/cache. Or, for instances sharing a database, blocks in PostgreSQL (or in an S3-compatible
// bucket indexed there) with the caches still under each instance's own data directory.
import { join } from 'node:path'
import { S3Client, type SQL } from 'bun'
import { MemoryDatastore } from 'datastore-core'
import { LevelDatastore } from 'datastore-level'
import { contentStore } from './helia.ts'
import { openLevelBlockSpace } from './level/block-space.ts'
import { openPostgresBlockSpace } from './postgres/block-space.ts'
import { openS3BlockSpace } from './s3/block-space.ts'
import type { BlockSpace, ContentStore } from './store.ts'
import type { S3Place } from '../config/values.ts'

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
 * for their durability; its close() leaves `sql` to the caller), or with `s3` in that bucket, indexed in `sql`'s
 * database. A collection spares blocks written in
 * the last `gcGraceSeconds`: the longest an import may take, from its first block to the record naming it. Helia's
 * datastore is in memory: it keeps only Helia's own version mark and pins, and the content store uses no pins.
 */
export async function openPostgresContent(sql: SQL, options: { dataDir: string; gcGraceSeconds: number; fileCacheBytes?: number; s3?: S3Place }): Promise<ContentStore> {
  const space = options.s3 ? await openS3BlockSpace(sql, await reachBucket(options.s3)) : await openPostgresBlockSpace(sql)
  return contentStore({
    space,
    datastore: new MemoryDatastore(),
    cacheDir: join(options.dataDir, 'cache'),
    fileCacheBytes: options.fileCacheBytes,
    graceMs: options.gcGraceSeconds * 1000,
  })
}

/** A client of the bucket `place` names, once it answered (credentials from the environment, as Bun reads them). */
async function reachBucket(place: S3Place): Promise<{ client: S3Client; prefix: string }> {
  const client = new S3Client({ bucket: place.bucket, ...(place.endpoint ? { endpoint: place.endpoint } : {}), ...(place.region ? { region: place.region } : {}), virtualHostedStyle: place.virtualHostedStyle })
  try {
    await client.exists(`${place.prefix}.trellis-reach`)
  } catch (error) {
    throw new Error(`the S3 bucket at ${place.url} cannot be used: ${String((error as Error)?.message ?? error).split('\n')[0]}`)
  }
  return { client, prefix: place.prefix }
}
