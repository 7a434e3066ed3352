// The block spaces PostgreSQL records host beside themselves, for instances sharing the database: a table of blocks
// in the records' own database, or an S3-compatible bucket indexed there. Both run on the records' pool
// (TRELLIS_DB_POOL is the instance's connections, not each store's), which the records close.
import { S3Client, type SQL } from 'bun'
import type { BlockSpaces } from '../../records.ts'
import type { S3Place } from '../../../config/values.ts'
import { openPostgresBlockSpace } from './table-space.ts'
import { openS3BlockSpace, type S3Bucket } from './bucket-space.ts'

export const postgresBlockSpaces = (sql: SQL): BlockSpaces => ({
  inDatabase: () => openPostgresBlockSpace(sql),
  inBucket: async (place) => openS3BlockSpace(sql, await reachBucket(place)),
})

/** A client of the bucket `place` names, once it answered (credentials from the environment, as Bun reads them). */
async function reachBucket(place: S3Place): Promise<S3Bucket> {
  const client = new S3Client({
    bucket: place.bucket,
    ...(place.endpoint ? { endpoint: place.endpoint } : {}),
    ...(place.region ? { region: place.region } : {}),
    virtualHostedStyle: place.virtualHostedStyle,
  })
  try {
    await client.exists(`${place.prefix}.trellis-reach`)
  } catch (error) {
    throw new Error(`the S3 bucket at ${place.url} cannot be used: ${String((error as Error)?.message ?? error).split('\n')[0]}`)
  }
  return { client, prefix: place.prefix }
}
