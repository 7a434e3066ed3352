// A feed's pass on sale. Its reads come with the feed's (store/feeds.ts joins the offer on sale into every feed row).
import { q, type Sql } from './query.ts'
import type { FeedRecord, PassOfferRecord } from '../models/records.ts'
import { FEED_SELECT, feedRecord, type FeedRow } from './feeds.ts'

export type NewPassOffer = Pick<PassOfferRecord, 'feed_id' | 'price' | 'duration_s' | 'description'>

export interface PassOfferStore {
  /** Puts the feed's pass on sale, or changes the offer on sale: for later buyers only (a sale keeps its own terms). */
  put(offer: NewPassOffer, now: number): Promise<void>
  /** Takes the feed's pass off sale; false when none was on sale. */
  withdraw(feedId: string, now: number): Promise<boolean>
  /**
   * The feeds with a pass on sale now (active: not deleted, not taken down), newest feed first, each with its pass;
   * `payTo`: of that owner only (its address in lower case).
   */
  onSale(limit: number, offset: number, payTo?: string): Promise<PassOnSale[]>
  /** How many passes are on sale now (of the owner `payTo` only, when given). */
  onSaleCount(payTo?: string): Promise<number>
}

/** A pass on sale, with the feed it reads (its `pass` the offer) and the name of the feed's category. */
export interface PassOnSale {
  feed: FeedRecord
  category_name: string | null
}

// A pass on sale is an active offer of a live feed: not deleted (then the feed shows no pass), not taken down.
const LIVE_FEED = q`f.is_active = 1 AND f.taken_down = 0`
// One owner's: its wallet by address_lc (unique), its feeds by feeds_owner, looked up one by one (SQLite would
// otherwise walk every active feed newest first for the ORDER BY, filtering by owner).
const ofOwner = (payTo: string | undefined) =>
  payTo === undefined
    ? q``
    : q`AND f.id IN (SELECT o.id FROM wallets ow CROSS JOIN feeds o WHERE ow.address_lc = ${payTo} AND o.owner_id = ow.id)`

export function passOfferStore(sql: Sql): PassOfferStore {
  return {
    async put(o, now) {
      await sql.run(q`INSERT INTO pass_offers (feed_id, price, duration_s, description, is_active, created_at, updated_at)
        VALUES (${o.feed_id}, ${o.price}, ${o.duration_s}, ${o.description}, 1, ${now}, ${now})
        ON CONFLICT (feed_id) DO UPDATE SET price = excluded.price, duration_s = excluded.duration_s,
        description = excluded.description, is_active = 1, updated_at = excluded.updated_at`)
    },
    withdraw: async (feedId, now) =>
      (await sql.run(q`UPDATE pass_offers SET is_active = 0, updated_at = ${now} WHERE feed_id = ${feedId} AND is_active = 1`)) === 1,
    async onSale(limit, offset, payTo) {
      const rows = await sql.all<FeedRow & { category_name: string | null }>(q`SELECT s.*, c.name AS category_name
        FROM (${FEED_SELECT} WHERE p.feed_id IS NOT NULL AND ${LIVE_FEED} ${ofOwner(payTo)}) s
        LEFT JOIN categories c ON c.id = s.category_id
        ORDER BY s.id DESC LIMIT ${limit} OFFSET ${offset}`)
      return rows.map(({ category_name, ...row }) => ({ feed: feedRecord(row), category_name }))
    },
    onSaleCount: async (payTo) =>
      Number(
        (
          await sql.get<{ n: number | string }>(q`SELECT COUNT(*) AS n FROM pass_offers p JOIN feeds f ON f.id = p.feed_id
          WHERE p.is_active = 1 AND ${LIVE_FEED} ${ofOwner(payTo)}`)
        )?.n ?? 0,
      ),
  }
}
