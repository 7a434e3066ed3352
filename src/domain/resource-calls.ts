// How each paid URL is called and what it answers, for the 402's bazaar declaration (chain/x402/bazaar.ts): an
// entry's record (JSON, with the signed URL of its bytes), an entry's bytes (its own media type), a feed's pass (JSON,
// bought with POST). The examples are the answer's shape with this entry's or this feed's own values.
import type { EntryRecord, FeedRecord, PassOfferRecord } from '../models/records.ts'
import type { ResourceCall } from '../chain/x402/requirements.ts'

export const ENTRY_ROUTE = '/v1/feeds/:feed_id/entries/:entry_id'
export const PASS_ROUTE = '/v1/feeds/:feed_id/pass/purchases'

const EXAMPLE_TIME = 1_767_225_600

type SoldEntry = Pick<EntryRecord, 'id' | 'feed_id' | 'title' | 'mime_type' | 'tags'>

export function entryCall(entry: SoldEntry, sold: 'record' | 'bytes', mediaType: string): ResourceCall {
  if (sold === 'bytes') return { method: 'GET', route: `${ENTRY_ROUTE}/content`, returns: { mediaType }, tags: entry.tags }
  const example = {
    id: entry.id,
    feed_id: entry.feed_id,
    title: entry.title,
    mime_type: entry.mime_type,
    is_free: false,
    content_url: 'the signed URL of the bytes (GET it), valid one hour',
  }
  return { method: 'GET', route: ENTRY_ROUTE, returns: { mediaType, example }, tags: entry.tags }
}

export function passCall(feed: Pick<FeedRecord, 'id' | 'tags'>, offer: Pick<PassOfferRecord, 'duration_s'>): ResourceCall {
  // A pass bought at 2026-01-01T00:00:00Z (the answer is routes/pass-purchases.ts's Pass).
  const example = {
    id: '00000000-0000-4000-8000-000000000000',
    feed_id: feed.id,
    holder: '0x0000000000000000000000000000000000000000',
    starts_at: EXAMPLE_TIME,
    expires_at: EXAMPLE_TIME + offer.duration_s,
    transaction_id: 'tx_00000000-0000-4000-8000-000000000000',
  }
  return { method: 'POST', route: PASS_ROUTE, returns: { mediaType: 'application/json', example }, tags: feed.tags }
}
