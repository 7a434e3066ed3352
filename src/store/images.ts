// Which stored CIDs are cover images, and of which type.
import { q, type Sql } from './query.ts'
import type { ImageRecord } from '../models/records.ts'

export interface ImageStore {
  byCid(cid: string): Promise<ImageRecord | null>
  record(image: ImageRecord): Promise<void>
  /** True when some entry's content has this CID. */
  isEntryContent(cid: string): Promise<boolean>
  /**
   * True while a takedown stands for something with these bytes: the cover of a feed taken down, or the content of
   * an entry taken down (or of its feed).
   */
  isTakenDown(cid: string): Promise<boolean>
}

export function imageStore(sql: Sql): ImageStore {
  return {
    async byCid(cid) {
      const row = await sql.get<ImageRecord>(q`SELECT cid, mime_type, size, created_at FROM images WHERE cid = ${cid}`)
      return row ? { ...row, size: Number(row.size), created_at: Number(row.created_at) } : null
    },
    async record(image) {
      await sql.run(q`INSERT INTO images (cid, mime_type, size, created_at)
        VALUES (${image.cid}, ${image.mime_type}, ${image.size}, ${image.created_at})
        ON CONFLICT (cid) DO NOTHING`)
    },
    isEntryContent: async (cid) => (await sql.get(q`SELECT 1 AS one FROM entries WHERE cid = ${cid} LIMIT 1`)) !== undefined,
    // Feeds by their standing takedowns (few, and feeds have no index on image_cid); entries by their CID's index.
    isTakenDown: async (cid) =>
      (await sql.get(q`SELECT 1 AS one FROM takedowns t JOIN feeds f ON f.id = t.target_id
        WHERE t.kind = 'feed' AND t.reinstated_at IS NULL AND f.image_cid = ${cid}
      UNION ALL SELECT 1 AS one FROM entries e JOIN feeds f ON f.id = e.feed_id
        WHERE e.cid = ${cid} AND (e.taken_down = 1 OR f.taken_down = 1)
      LIMIT 1`)) !== undefined,
  }
}
