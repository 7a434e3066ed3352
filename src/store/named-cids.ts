// The content the records name: every entry's item (withdrawn ones too), every stored cover image, every feed's
// cover. Records are never removed, so this list only grows; what is not in it, `trellis gc` may remove.
import type { Database } from 'bun:sqlite'

export const namedCids = (db: Database): string[] =>
  db.query<{ cid: string }, []>(`SELECT cid FROM entries UNION SELECT cid FROM images UNION
    SELECT image_cid AS cid FROM feeds WHERE image_cid IS NOT NULL ORDER BY cid`).all().map((r) => r.cid)
