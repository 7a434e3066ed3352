// Feed passes: the offer a feed's owner puts on sale (a price for a duration), read with the feed; what buying one
// costs at its URL; the passes a wallet holds.
import type { Records } from '../store/stores.ts'
import type { FeedRecord, PassOfferRecord, PassRecord } from '../models/records.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { passCall } from './resource-calls.ts'
import { PASS_MAX_DURATION_S, PASS_MIN_DURATION_S, type PutPass } from '../models/pass.ts'
import { nowSeconds } from '../lib/clock.ts'
import { spokenDuration } from '../lib/durations.ts'
import { fail } from './errors.ts'
import { takenDown } from './moderation.ts'
import { parsePrice } from './prices.ts'
import type { FeedService } from './feeds.ts'
import type { Signer } from './auth.ts'

/** Passes a statement of the expiry job marks ended: the writer is never held long. */
const ENDED_BATCH = 500

const noPass = (): never => fail('PASS_NOT_FOUND', 'this feed has no pass on sale')

export function passService(d: { records: Records; feeds: FeedService; network: string }) {
  return {
    /** The pass on sale of a feed (404 FEED_NOT_FOUND, 451 TAKEN_DOWN as for the feed; PASS_NOT_FOUND when none is). */
    async offer(feedId: string): Promise<PassOfferRecord> {
      return (await d.feeds.get(feedId)).pass ?? noPass()
    },

    /** Puts the feed's pass on sale at these terms, or changes them for later buyers (the owner only). */
    async put(signer: Signer, feedId: string, input: PutPass): Promise<PassOfferRecord> {
      const feed = await d.feeds.owned(signer, feedId)
      if (!feed.is_active) fail('FEED_INACTIVE', 'a pass can only be sold for an active feed')
      const price = parsePrice(input.price, d.network, 'a pass')
      const duration = input.duration_s
      if (!Number.isInteger(duration) || duration < PASS_MIN_DURATION_S || duration > PASS_MAX_DURATION_S)
        fail('INVALID_DURATION', `duration_s must be whole seconds from ${PASS_MIN_DURATION_S} to ${PASS_MAX_DURATION_S}`)
      const offered = { feed_id: feed.id, price, duration_s: duration, description: input.description ?? null }
      return d.records.transact(async (tx) => {
        const now = nowSeconds()
        await tx.passOffers.put(offered, now)
        // Taken down meanwhile, or deleted: the offer is not made (the transaction rolls back).
        const after = (await tx.feeds.byId(feed.id))!
        if (after.taken_down) takenDown('feed')
        return after.pass ?? fail('FEED_INACTIVE', 'a pass can only be sold for an active feed')
      })
    },

    /** What buying the feed's pass at `resource` costs, and to whom (the feed's owner). */
    priceTag(feed: FeedRecord, offer: PassOfferRecord, resource: string): PriceTag {
      return {
        amount: offer.price.toString(),
        payTo: feed.owner_wallet_address,
        resource,
        description: `A ${spokenDuration(offer.duration_s)} pass to "${feed.name}": every paid entry, those published later too`,
        mimeType: 'application/json',
        get call() {
          return passCall(feed, offer)
        },
      }
    },

    /** The passes a wallet holds, newest first (the wallet itself only: its own signature). */
    async held(signer: Signer, holder: string, beforeId: string | undefined, limit: number): Promise<PassRecord[]> {
      if (signer.address.toLowerCase() !== holder.toLowerCase()) fail('UNAUTHORIZED', 'a wallet lists only its own passes')
      return d.records.read.passes.listByHolder(holder.toLowerCase(), beforeId, limit)
    },

    /** Passes over: each is marked ended, and its creator told (pass.expired) unless the holder's time runs on. How many. */
    async endExpired(now: number): Promise<number> {
      let ended = 0
      for (;;) {
        const batch = await d.records.transact((tx) => tx.passes.markEnded(now, ENDED_BATCH), { unkept: true })
        ended += batch
        if (batch < ENDED_BATCH) return ended
      }
    },

    /** Until when `address` holds a pass to the feed now; null: none runs. */
    heldUntil: (address: string, feedId: string) => d.records.read.passes.runningUntil(address.toLowerCase(), feedId, nowSeconds()),

    /** The passes on sale now, newest feed first, each with its feed (x402 discovery lists them); `payTo`: one owner's. */
    onSale: (limit: number, offset: number, payTo?: string) => d.records.read.passOffers.onSale(limit, offset, payTo?.toLowerCase()),
    onSaleCount: (payTo?: string) => d.records.read.passOffers.onSaleCount(payTo?.toLowerCase()),

    /** The pass a payment bought, once its sale is recorded. */
    bought: (transactionId: string) => d.records.read.passes.byTransaction(transactionId),

    /** Takes the feed's pass off sale: no new sales; holders keep their time (the owner only). */
    async withdraw(signer: Signer, feedId: string): Promise<void> {
      const feed = await d.feeds.owned(signer, feedId)
      if (!(await d.records.transact((tx) => tx.passOffers.withdraw(feed.id, nowSeconds())))) noPass()
    },
  }
}
export type PassService = ReturnType<typeof passService>
