// Entry rules: content into the private store, prices, limits, soft delete and who may read what.
import type { Records } from '../store/stores.ts'
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import type { ArrivedContent, ContentStore, ContentWriter } from '../content/store.ts'
import type { ContentKey } from '../content/store.ts'
import { newId } from '../lib/ids.ts'
import { concatChunks } from '../lib/chunks.ts'
import { nowSeconds } from '../lib/clock.ts'
import { parsePrice } from './prices.ts'
import { fail } from './errors.ts'
import { takenDown } from './moderation.ts'
import { MAX_CONTENT_BASE64_CHARS, SUPPORTED_MIME_TYPES, type CreateEntry, type UpdateEntry } from '../models/entry.ts'
import type { EntryPatch } from '../store/entries.ts'
import type { Base64Content } from './base64.ts'
import { checkMediaType, safeMediaType } from './media-type.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { entryCall } from './resource-calls.ts'
import type { Signer } from './auth.ts'
import type { FeedService } from './feeds.ts'
import { storedSearchText } from './search-text.ts'

export const MAX_ENTRIES_PER_FEED = 1000

/** The create-entry body, with content_base64 decoded (as it arrived, for a large upload). */
export type NewEntryInput = Omit<CreateEntry, 'content_base64'> & {
  content: Base64Content
  /** The content, written to a file as the body arrived (see contentWriter); its pieces were handed on, not kept. */
  arrived?: Promise<ArrivedContent>
}

interface Deps {
  records: Records
  feeds: FeedService
  content: ContentStore
  network: string
  /** True when the wallet bought the entry, or holds a pass to its feed now. */
  entitled: (address: string, entry: Pick<EntryRecord, 'id' | 'feed_id'>) => Promise<boolean>
}

/** An item as served: its CID (the ETag), its media type, and the key that opens it when it is stored sealed. */
export interface ServableContent {
  cid: string
  mime_type: string
  key?: ContentKey | null
}

/** How a caller may read an entry's content (see access()). */
export type Access = 'free' | 'owner' | 'buyer' | 'pay' | 'withdrawn'

/** A paid entry whose expires_at has passed is free: "early access" ends. */
export const isFreeNow = (entry: Pick<EntryRecord, 'is_free' | 'expires_at'>, now = nowSeconds()): boolean =>
  entry.is_free || (entry.expires_at !== null && entry.expires_at <= now)

/** Access as the rows tell it: 'pay' for a signer who may yet turn out to have bought the entry. */
function accessWithoutPurchases(feed: FeedRecord, entry: EntryRecord, signer: Signer | null): Access {
  const isOwner = signer !== null && signer.address.toLowerCase() === feed.owner_wallet_address.toLowerCase()
  if (!entry.is_active || !feed.is_active) return isOwner ? 'owner' : 'withdrawn'
  if (isFreeNow(entry)) return 'free'
  return isOwner ? 'owner' : 'pay'
}

const contentPublic = (): never =>
  fail('ENTRY_CONTENT_PUBLIC', 'this entry has been free, so its content is public: publish a new paid entry instead')
const limitReached = (): never => fail('ENTRY_LIMIT_REACHED', `a feed may hold at most ${MAX_ENTRIES_PER_FEED} active entries`)
const feedInactive = (): never => fail('FEED_INACTIVE', 'entries can only be added to an active feed')

export function entryService(d: Deps) {
  const read = d.records.read

  async function get(feedId: string, entryId: string): Promise<{ feed: FeedRecord; entry: EntryRecord }> {
    const feed = await d.feeds.get(feedId)
    const entry = await read.entries.byId(entryId)
    if (!entry || entry.feed_id !== feed.id) return fail('ENTRY_NOT_FOUND', 'entry not found')
    return entry.taken_down ? takenDown('entry') : { feed, entry }
  }

  return {
    get,

    async create(signer: Signer, feedId: string, input: NewEntryInput): Promise<EntryRecord> {
      const feed = await d.feeds.owned(signer, feedId)
      if (!feed.is_active) feedInactive()
      // The whole value must be a media type (it is stored and later sent in headers exactly as given);
      // its base type, compared without case and parameters, must be a supported one.
      const mime = checkMediaType(input.mime_type, SUPPORTED_MIME_TYPES)
      if (!mime.ok) fail('UNSUPPORTED_MIME_TYPE', `mime_type must be one of: ${SUPPORTED_MIME_TYPES.join(', ')}`, mime.reason)
      if (input.content.chars > MAX_CONTENT_BASE64_CHARS) fail('PAYLOAD_TOO_LARGE', 'content_base64 is larger than 50 MB')
      const isFree = input.is_free ?? true
      const price = isFree ? 0n : parsePrice(input.price, d.network, 'a paid entry')
      const now = nowSeconds()
      if (input.expires_at !== undefined && input.expires_at !== null && input.expires_at <= now)
        fail('INVALID_EXPIRES_AT', 'expires_at must be in the future')
      if (feed.total_entries >= MAX_ENTRIES_PER_FEED) limitReached() // before the content is stored; the slot is taken below
      const pieces = input.content.pieces ?? fail('INVALID_BASE64', 'content_base64 is not valid base64')
      if (input.content.size === 0) fail('INVALID_BASE64', 'content_base64 decodes to no content')

      // Paid content is stored sealed, so its public CID cannot confirm a guess of its bytes (content/sealing.ts).
      const stored = await d.content.put(input.arrived ? (await input.arrived).pieces() : pieces, { sealed: !isFree })
      if (!isFree && !stored.key) throw new Error('paid content was stored unsealed')
      // A free entry's text is searchable; a paid entry's content is never read for search (search-text.ts).
      const bodyText = isFree ? await storedSearchText(d.content, stored.cid, input.mime_type, null) : null
      const added = await d.records.single((tx) =>
        tx.entries.add(
          {
            id: newId(),
            feed_id: feed.id,
            cid: stored.cid,
            size: stored.size,
            mime_type: input.mime_type,
            title: input.title ?? null,
            description: input.description ?? null,
            metadata: input.metadata ?? null,
            tags: input.tags ?? [],
            is_free: isFree,
            price,
            expires_at: input.expires_at ?? null,
            content_key: stored.key ?? null,
            body_text: bodyText,
            now: nowSeconds(),
          },
          MAX_ENTRIES_PER_FEED,
        ),
      )
      if (added === 'full') limitReached()
      return typeof added === 'string' ? feedInactive() : added
    },

    /**
     * Takes a large upload's content while its body arrives, when the signer may add to this feed; else null (the
     * body is read whole and create() gives the error). The caller discards what arrived if create() never reads it.
     */
    async contentWriter(signer: Signer, feedId: string): Promise<ContentWriter | null> {
      try {
        return (await d.feeds.owned(signer, feedId)).is_active ? d.content.writer() : null
      } catch {
        return null
      }
    },

    /**
     * Changes an entry's words and price; its content never changes. A paid entry may become free, never the other way:
     * once free (published so, made so, or its early access over) its bytes were public, and the receipts handed out
     * meanwhile (content_url, an hour long) would keep opening it; a new paid entry is the way. So "free now" is "was
     * ever free", and no stored flag is needed. Past buyers keep their access: purchases belong to the entry.
     */
    async update(signer: Signer, feedId: string, entryId: string, changes: UpdateEntry): Promise<EntryRecord> {
      if (changes.content_base64 !== undefined || changes.mime_type !== undefined)
        fail('CONTENT_IMMUTABLE', "an entry's content cannot change: create a new entry")
      const feed = await d.feeds.owned(signer, feedId)
      const { entry } = await get(feedId, entryId)
      if (!entry.is_active || !feed.is_active) fail('ENTRY_NOT_FOUND', 'entry not found')
      const now = nowSeconds()
      const patch: EntryPatch = {}
      for (const field of ['title', 'description', 'metadata', 'tags'] as const)
        if (changes[field] !== undefined) (patch as Record<string, unknown>)[field] = changes[field]
      if (changes.is_free === true && changes.price) fail('INVALID_PRICE', 'a free entry has no price')
      if (changes.expires_at !== undefined && changes.expires_at !== null && changes.expires_at <= now)
        fail('INVALID_EXPIRES_AT', 'expires_at must be in the future')
      const paidNow = !isFreeNow(entry, now)
      const paid = changes.is_free === true ? false : changes.is_free === false || changes.price ? true : paidNow
      if (!paid && paidNow) Object.assign(patch, { is_free: true, price: 0n, expires_at: null })
      // Sold on: the price, its currency or its early access asked for (a paid entry's words alone leave them be).
      const sold = paid && (changes.is_free !== undefined || changes.price !== undefined || changes.expires_at !== undefined)
      if (sold) {
        if (!paidNow) contentPublic()
        patch.is_free = false
        patch.price = changes.price ? parsePrice(changes.price, d.network, 'a paid entry') : entry.price
        patch.expires_at = changes.expires_at !== undefined ? changes.expires_at : entry.expires_at
      } else if (!paid && changes.expires_at !== undefined && changes.expires_at !== null) {
        fail('INVALID_EXPIRES_AT', 'only a paid entry has early access: send is_free false and a price with it')
      }
      // Made free: its content's text is searchable from now on, read (and opened) before the write.
      const madeFree = !paid && paidNow
      const bodyText = madeFree
        ? await storedSearchText(d.content, entry.cid, entry.mime_type, await read.entries.contentKey(entry.id))
        : ''
      await d.records.transact(async (tx) => {
        // Its early access may have ended since it was read (the clock turns it free, no write does): then it stays so.
        if (sold && isFreeNow((await tx.entries.held(entry.id))!, nowSeconds())) contentPublic()
        await tx.entries.update(entry.id, patch, now)
        if (madeFree) await tx.search.setBody(entry.id, bodyText)
      })
      return (await read.entries.byId(entry.id))!
    },

    /** Resolves once the delete is durable, in a commit shared with the other writes of this turn. */
    async remove(signer: Signer, feedId: string, entryId: string): Promise<void> {
      await d.feeds.owned(signer, feedId)
      const { entry } = await get(feedId, entryId)
      await d.records.transact((tx) => tx.entries.deactivate(entry.id, entry.feed_id, nowSeconds()))
    },

    /**
     * Early access over: paid entries whose expires_at has passed become free, and their text searchable (read and
     * opened first, then written with the change). How many became free.
     */
    async endEarlyAccess(now: number): Promise<number> {
      const expiring = await read.entries.expiring(now)
      // Nothing due, nothing written: even a statement that changes no row tells every instance that records changed.
      if (expiring.length === 0) return 0
      const texts: [string, string][] = []
      for (const entry of expiring) {
        const text = await storedSearchText(d.content, entry.cid, entry.mime_type, await read.entries.contentKey(entry.id))
        if (text) texts.push([entry.id, text])
      }
      return d.records.transact(async (tx) => {
        const freed = await tx.entries.freeExpired(now)
        for (const [id, text] of texts) await tx.search.setBody(id, text)
        return freed
      })
    },

    /**
     * An entry's content as text (UTF-8, a bad sequence replaced), to show in a page; null when it is over `maxBytes`.
     * The caller decides who may read it (a free entry, or its owner's or buyer's own page).
     */
    async text(entry: Pick<EntryRecord, 'id' | 'cid' | 'mime_type'>, maxBytes: number): Promise<string | null> {
      const item = await this.servable(entry)
      const size = await d.content.size(item.cid)
      if (size === null || size > maxBytes) return null
      const body = size === 0 ? new Uint8Array() : await d.content.body(item.cid, size, undefined, item.key)
      return new TextDecoder().decode(body instanceof Blob ? await body.arrayBuffer() : body)
    },

    /**
     * The first `maxBytes` of an entry's content as text (as text() decodes it; a character the cut splits is left
     * out), and whether there is more; null when the content is not in the store. The caller decides who may read it.
     */
    async opening(entry: Pick<EntryRecord, 'id' | 'cid' | 'mime_type'>, maxBytes: number): Promise<{ text: string; cut: boolean } | null> {
      const item = await this.servable(entry)
      const size = await d.content.size(item.cid)
      if (size === null) return null
      const [cut, length] = [size > maxBytes, Math.min(size, maxBytes)]
      // Read as a range: a large item's opening costs no copy of all of it (as body() would write to a file).
      const bytes = length === 0 ? new Uint8Array() : await concatChunks(d.content.read(item.cid, { offset: 0, length }, item.key), length)
      return { text: new TextDecoder().decode(bytes, { stream: cut }), cut }
    },

    /** What serving an entry's bytes needs: its item, type, and the key its content is sealed under (paid entries). */
    async servable(entry: Pick<EntryRecord, 'id' | 'cid' | 'mime_type'>): Promise<ServableContent> {
      return { cid: entry.cid, mime_type: entry.mime_type, key: await read.entries.contentKey(entry.id) }
    },

    async list(q: { feedId: string; isFree?: boolean; beforeId?: string; limit: number }): Promise<EntryRecord[]> {
      const feed = await d.feeds.get(q.feedId)
      return d.records.reads.entries.list({ feedId: feed.id, isFree: q.isFree, beforeId: q.beforeId, limit: q.limit })
    },

    /**
     * Who reads an entry's content, and how. A withdrawn (deleted) entry or feed: only its owner. Otherwise free
     * entries: everyone; paid ones: the feed owner and buyers (signed in); anyone else pays (x402).
     */
    async access(feed: FeedRecord, entry: EntryRecord, signer: Signer | null): Promise<Access> {
      const known = accessWithoutPurchases(feed, entry, signer)
      return known === 'pay' && signer !== null && (await d.entitled(signer.address, entry)) ? 'buyer' : known
    },

    /** The same for a caller who does not sign in: decided from the rows alone. */
    anonymousAccess: (feed: FeedRecord, entry: EntryRecord): Exclude<Access, 'owner' | 'buyer'> =>
      accessWithoutPurchases(feed, entry, null) as Exclude<Access, 'owner' | 'buyer'>,

    /**
     * What a caller who must pay (see access()) pays for `resource`, the URL of the entry's record or of its bytes:
     * its price, to the feed owner. A payment's requirements are rebuilt from this, never taken from the payment.
     */
    priceTag(feed: Pick<FeedRecord, 'owner_wallet_address'>, entry: EntryRecord, resource: string, sold: 'record' | 'bytes'): PriceTag {
      const mimeType = sold === 'bytes' ? safeMediaType(entry.mime_type) : 'application/json'
      return {
        amount: entry.price.toString(),
        payTo: feed.owner_wallet_address, // stored in checksum form
        resource,
        description: entry.title ?? `Entry ${entry.id}`,
        mimeType,
        // Read only when a 402 or a listing is made (once per URL): not on every request that makes a tag.
        get call() {
          return entryCall(entry, sold, mimeType)
        },
      }
    },
  }
}
export type EntryService = ReturnType<typeof entryService>
