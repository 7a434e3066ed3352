// A pass holder's private feed URLs (migration 023): one standing per feed and holder until revoked. The token in the
// URL is made from the row's id by the domain (domain/pass-feed-urls.ts); the row holds none.
import { q, type Sql } from './query.ts'
import type { PassFeedUrlRecord } from '../models/records.ts'

export interface PassFeedUrlStore {
  /**
   * The standing URL of `holderLc` to the feed: the one already standing, else a new one with `id` (of two requests at
   * once, both get the one that was stored first).
   */
  standing(url: { id: string; feed_id: string; holder_lc: string; now: number }): Promise<PassFeedUrlRecord>
  /** Revokes the holder's standing URL to the feed; false when none stands. */
  revoke(feedId: string, holderLc: string, now: number): Promise<boolean>
  byId(id: string): Promise<PassFeedUrlRecord | undefined>
}

const toRecord = (row: PassFeedUrlRecord): PassFeedUrlRecord => ({
  ...row,
  created_at: Number(row.created_at),
  revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
})

const SELECT = q`SELECT id, feed_id, holder_lc, created_at, revoked_at FROM pass_feed_urls`

export function passFeedUrlStore(sql: Sql): PassFeedUrlStore {
  const one = async (query: ReturnType<typeof q>) => {
    const row = await sql.get<PassFeedUrlRecord>(query)
    return row && toRecord(row)
  }
  return {
    async standing(u) {
      // The partial unique index keeps one standing URL: a second insert at once does nothing and reads the first.
      await sql.run(q`INSERT INTO pass_feed_urls (id, feed_id, holder_lc, created_at, revoked_at)
        VALUES (${u.id}, ${u.feed_id}, ${u.holder_lc}, ${u.now}, NULL)
        ON CONFLICT (feed_id, holder_lc) WHERE revoked_at IS NULL DO NOTHING`)
      return (await one(q`${SELECT} WHERE feed_id = ${u.feed_id} AND holder_lc = ${u.holder_lc} AND revoked_at IS NULL`))!
    },
    revoke: async (feedId, holderLc, now) =>
      (await sql.run(
        q`UPDATE pass_feed_urls SET revoked_at = ${now} WHERE feed_id = ${feedId} AND holder_lc = ${holderLc} AND revoked_at IS NULL`,
      )) === 1,
    byId: (id) => one(q`${SELECT} WHERE id = ${id}`),
  }
}
