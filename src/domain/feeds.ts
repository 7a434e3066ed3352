// Feed rules: ownership, the 10-active-feeds limit, soft delete and reactivation.
import type { Db } from '../store/db.ts'
import type { FeedPatch, FeedStore } from '../store/feeds.ts'
import type { FeedRecord, ImageRecord } from '../models/records.ts'
import type { CreateFeed, UpdateFeed } from '../models/feed.ts'
import type { EntryStore } from '../store/entries.ts'
import type { WalletStore } from '../store/wallets.ts'
import type { CategoryStore } from '../store/categories.ts'
import type { ContentStore } from '../content/store.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'
import { coverImage, ingestImage, storedImage, type FetchLog } from './images.ts'
import type { ImageStore } from '../store/images.ts'
import type { Signer } from './auth.ts'

export const MAX_ACTIVE_FEEDS = 10

export interface FeedQuery {
  owner_id?: string
  category?: string
  tags?: string[]
  min_entries: number
  is_active?: boolean
  min_age?: number
  max_age?: number
  beforeId?: string
  limit: number
}

interface Deps {
  db: Db
  feeds: FeedStore
  entries: EntryStore
  wallets: WalletStore
  categories: CategoryStore
  images: ImageStore
  content: ContentStore
  defaultNetwork: string
  allowPrivateFetch: boolean
  /** Why an image_url fetch failed (the client gets one generic answer). */
  logFetch: FetchLog
}

const invalid = (field: string, message: string): never => fail('invalid_request', message, field)

export function feedService(d: Deps) {
  function activeCategory(id: string | null | undefined): string | null {
    if (id === undefined || id === null) return null
    const category = d.categories.byId(id)
    if (!category) return invalid('category_id', 'category_id does not name a category')
    if (!category.is_active) return invalid('category_id', 'category_id names an inactive category')
    return category.id
  }

  function owned(signer: Signer, feedId: string): FeedRecord {
    const feed = d.feeds.byId(feedId) ?? fail('FEED_NOT_FOUND', 'feed not found')
    if (feed.owner_wallet_address.toLowerCase() !== signer.address.toLowerCase()) fail('UNAUTHORIZED', 'only the feed owner may do this')
    return feed
  }

  return {
    get: (id: string): FeedRecord => d.feeds.byId(id) ?? fail('FEED_NOT_FOUND', 'feed not found'),
    /** The feed's cover image. */
    async cover(id: string): Promise<ImageRecord> {
      const feed = d.feeds.byId(id) ?? fail('FEED_NOT_FOUND', 'feed not found')
      const image = feed.image_cid ? await coverImage(feed.image_cid, d.content, d.images) : null
      return image ?? fail('NOT_FOUND', 'this feed has no cover image')
    },
    /** The feed's cover when it is already recorded as an image here (no content read); null otherwise. */
    knownCover(id: string): ImageRecord | null {
      const cid = d.feeds.byId(id)?.image_cid
      return cid ? d.images.byCid(cid) : null
    },
    owned,

    async create(signer: Signer, input: CreateFeed): Promise<FeedRecord> {
      const categoryId = activeCategory(input.category_id)
      // The image is fetched before the write transaction so a slow URL never holds the database.
      const imageCid = input.image_url ? await ingestImage(input.image_url, d.content, d.images, d.allowPrivateFetch, d.logFetch) : null
      const id = newId()
      d.db.transaction(() => {
        const now = nowSeconds()
        const ownerId = d.wallets.ensure(newId(), signer.address, signer.network ?? d.defaultNetwork, now)
        if (d.feeds.activeCountOf(ownerId) >= MAX_ACTIVE_FEEDS) fail('FEED_LIMIT_REACHED', `a wallet may own at most ${MAX_ACTIVE_FEEDS} active feeds`)
        d.feeds.insert({ id, owner_id: ownerId, category_id: categoryId, name: input.name, description: input.description ?? null, image_cid: imageCid, tags: input.tags ?? [], now })
      }).immediate()
      return d.feeds.byId(id)!
    },

    async update(signer: Signer, feedId: string, changes: UpdateFeed): Promise<FeedRecord> {
      const feed = owned(signer, feedId)
      const patch: FeedPatch = {}
      if (changes.name !== undefined) patch.name = changes.name
      if (changes.description !== undefined) patch.description = changes.description
      if (changes.tags !== undefined) patch.tags = changes.tags
      if (changes.category_id !== undefined) patch.category_id = activeCategory(changes.category_id)
      if (changes.image_url !== undefined && changes.image_url !== null) {
        patch.image_cid = await ingestImage(changes.image_url, d.content, d.images, d.allowPrivateFetch, d.logFetch)
      } else if (changes.image_cid !== undefined) {
        patch.image_cid = changes.image_cid === null ? null : storedImage(changes.image_cid, d.images, 'image_cid')
      }
      d.db.transaction(() => {
        const now = nowSeconds()
        const current = d.feeds.byId(feed.id)!
        if (changes.is_active === true && !current.is_active) {
          if (d.feeds.activeCountOf(current.owner_id) >= MAX_ACTIVE_FEEDS) fail('FEED_LIMIT_REACHED', `a wallet may own at most ${MAX_ACTIVE_FEEDS} active feeds`)
          patch.is_active = true
          d.entries.reactivateAllIn(feed.id, now)
        } else if (changes.is_active === false) {
          patch.is_active = false
        }
        d.feeds.update(feed.id, patch, now)
      }).immediate()
      return d.feeds.byId(feed.id)!
    },

    remove(signer: Signer, feedId: string): void {
      const feed = owned(signer, feedId)
      d.db.transaction(() => {
        const now = nowSeconds()
        d.entries.deactivateAllIn(feed.id, now)
        d.feeds.update(feed.id, { is_active: false }, now)
      }).immediate()
    },

    list(q: FeedQuery): FeedRecord[] {
      let categoryId: string | undefined
      if (q.category) {
        categoryId = (isUuid(q.category) ? d.categories.byId(q.category) : d.categories.byName(q.category))?.id
        if (!categoryId) return []
      }
      let ownerId = q.owner_id === '' ? undefined : q.owner_id
      if (ownerId !== undefined && !isUuid(ownerId) && !isWalletAddress(ownerId)) fail('INVALID_PARAMETER', 'invalid owner_id', 'owner_id must be a wallet id (UUID) or a 0x-prefixed address')
      if (ownerId !== undefined && isUuid(ownerId)) ownerId = ownerId.toLowerCase()
      else if (ownerId !== undefined) {
        ownerId = d.wallets.byAddress(ownerId)?.id // owner_id also accepts the owner's address
        if (!ownerId) return []
      }
      const now = nowSeconds()
      return d.feeds.list({
        ownerId,
        categoryId,
        tags: q.tags,
        minEntries: q.min_entries,
        isActive: q.is_active,
        createdBefore: q.min_age !== undefined ? now - q.min_age : undefined,
        createdAfter: q.max_age !== undefined ? now - q.max_age : undefined,
        beforeId: q.beforeId,
        limit: q.limit,
      })
    },
  }
}
export type FeedService = ReturnType<typeof feedService>
