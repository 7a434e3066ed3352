// What is for sale now, as every discovery form lists it (/discovery/resources in x402 v1 and v2, /.well-known/x402):
// each feed pass on sale (newest feed first, bought with POST at its purchase URL), then each paid entry on sale
// (newest first, by its record's URL), one list cut into pages. Each item is the price tag its 402 is made from, so
// a listing and the 402 at its URL never disagree.
import type { Services } from './services.ts'
import type { Listed } from '../chain/x402/discovery.ts'
import { nowSeconds } from '../lib/clock.ts'
import type { RecentEntry } from '../store/stats.ts'
import type { PassOnSale } from '../store/pass-offers.ts'
import type { EntryRecord } from '../models/records.ts'

/** `metadata`: what a listing tells besides the requirement: kind "entry" or "pass", the feed, the title, the media type. */
export type Sold = Listed

export interface SoldPage {
  items: Sold[]
  total: number
}

type StaleFrom = (at: number) => void

/** Where an entry is sold: its feed's name, the owner's wallet (paid to) and the feed's category name. */
export type Placement = Pick<RecentEntry, 'feed_name' | 'owner_wallet' | 'category_name'>

/** The listings of what is for sale: `passItem` and `entryItem` make one (search.ts's too); the function pages them all. */
export function forSaleItems(s: Services) {
  const passItem = ({ feed, category_name }: PassOnSale): Sold => {
    const offer = feed.pass!
    const metadata = {
      kind: 'pass',
      method: 'POST',
      feed_id: feed.id,
      feed_name: feed.name,
      duration_s: offer.duration_s,
      description: offer.description ?? feed.description,
      tags: feed.tags,
      category: category_name,
    }
    const tag = s.passes.priceTag(feed, offer, `${s.publicUrl()}/v1/feeds/${feed.id}/pass/purchases`)
    return { tag, method: 'POST', updatedAt: offer.updated_at, metadata }
  }

  const entryItem = (e: EntryRecord & Placement): Sold => {
    const path = `/v1/feeds/${e.feed_id}/entries/${e.id}`
    const tag = s.entries.priceTag({ owner_wallet_address: e.owner_wallet }, e, `${s.publicUrl()}${path}`, 'record')
    const metadata = {
      kind: 'entry',
      feed_id: e.feed_id,
      feed_name: e.feed_name,
      entry_id: e.id,
      title: e.title,
      description: e.description,
      mime_type: e.mime_type,
      tags: e.tags,
      category: e.category_name,
    }
    return { tag, method: 'GET', updatedAt: e.updated_at, metadata }
  }
  return { passItem, entryItem }
}

export function forSale(s: Services) {
  const { passItem, entryItem } = forSaleItems(s)
  /**
   * The page at `offset`; `staleFrom` learns when an entry on it stops being for sale by the clock (its early access
   * ends). `payTo`: only what that address is paid for (its owner's passes and entries), filtered in the queries.
   */
  return async function page(limit: number, offset: number, staleFrom: StaleFrom, payTo?: string): Promise<SoldPage> {
    // The counts are one read each per database version (the entries' also per minute: early access ends by the
    // clock), whatever the page; a page past the end reads nothing.
    const owner = payTo?.toLowerCase()
    const [entryTotal, passTotal] = await Promise.all([
      s.cached.get(
        `discovery:total:${owner ?? ''}`,
        async (totalStaleFrom) => (totalStaleFrom(nowSeconds() + 60), s.stats.forSaleCount(owner)),
        () => 16,
      ),
      s.cached.get(
        `discovery:passes:${owner ?? ''}`,
        () => s.passes.onSaleCount(owner),
        () => 16,
      ),
    ])
    // The passes first (at most one a feed, each reading many entries), then the entries; an offset past the passes
    // is an offset into the entries.
    const passes = offset < passTotal ? await s.passes.onSale(limit, offset, owner) : []
    const entryOffset = Math.max(0, offset - passTotal)
    const entryLimit = limit - passes.length
    const entries = entryLimit > 0 && entryOffset < entryTotal ? await s.stats.forSale(entryLimit, entryOffset, owner) : []
    for (const e of entries) if (e.expires_at !== null) staleFrom(e.expires_at)
    return { items: [...passes.map(passItem), ...entries.map(entryItem)], total: passTotal + entryTotal }
  }
}
export type ForSale = ReturnType<typeof forSale>
