// A feed's pass on sale. Its reads come with the feed's (store/feeds.ts joins the offer on sale into every feed row).
import { q, type Sql } from './query.ts'
import type { PassOfferRecord } from '../models/records.ts'

export type NewPassOffer = Pick<PassOfferRecord, 'feed_id' | 'price' | 'duration_s' | 'description'>

export interface PassOfferStore {
  /** Puts the feed's pass on sale, or changes the offer on sale: for later buyers only (a sale keeps its own terms). */
  put(offer: NewPassOffer, now: number): Promise<void>
  /** Takes the feed's pass off sale; false when none was on sale. */
  withdraw(feedId: string, now: number): Promise<boolean>
}

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
  }
}
