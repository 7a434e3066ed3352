// What a purchase buys: a paid entry, or a feed's pass for a time. The purchase machinery settles both alike; this
// says what each is to it (its row's columns, its purchase key, whether a payment's row bought it).
import type { EntryRecord, FeedRecord, PassOfferRecord } from '../../models/records.ts'
import { entrySold, type PaymentRow, type Sold } from '../../store/payments.ts'

export type Good = { kind: 'entry'; entry: EntryRecord } | { kind: 'pass'; feed: FeedRecord; offer: PassOfferRecord }

export const entryGood = (entry: EntryRecord): Good => ({ kind: 'entry', entry })

/** The good as its payment's row records it: a pass with the duration offered when the 402 was answered. */
export const soldOf = (good: Good): Sold =>
  good.kind === 'entry' ? entrySold(good.entry.id) : { entry_id: null, pass_feed_id: good.feed.id, pass_duration_s: good.offer.duration_s }

/** With the payer, the purchase: one payment of it is settled at a time. */
export const goodKey = (good: Good): string => (good.kind === 'entry' ? good.entry.id : `pass:${good.feed.id}`)

/** Whether a payment's row is a purchase of this good. */
export const boughtBy = (row: Pick<PaymentRow, 'entry_id' | 'pass_feed_id'>, good: Good): boolean =>
  good.kind === 'entry' ? row.entry_id === good.entry.id : row.pass_feed_id === good.feed.id
