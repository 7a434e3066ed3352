// Which stored CIDs are cover images, and of which type.
import type { Db } from './db.ts'
import type { ImageRecord } from '../models/records.ts'

export function imageStore(db: Db) {
  const byCid = db.query<ImageRecord, [string]>('SELECT cid, mime_type, size, created_at FROM images WHERE cid = ?')
  const insert = db.query('INSERT OR IGNORE INTO images (cid, mime_type, size, created_at) VALUES (?, ?, ?, ?)')
  const entryContent = db.query<{ one: number }, [string]>('SELECT 1 AS one FROM entries WHERE cid = ? LIMIT 1')
  return {
    byCid: (cid: string): ImageRecord | null => byCid.get(cid),
    record: (image: ImageRecord): void => void insert.run(image.cid, image.mime_type, image.size, image.created_at),
    /** True when some entry's content has this CID. */
    isEntryContent: (cid: string): boolean => entryContent.get(cid) !== null,
  }
}
export type ImageStore = ReturnType<typeof imageStore>
