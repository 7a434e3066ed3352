// Feed rules: ownership, the 10-active-feeds limit, soft delete and reactivation.
import type { FeedPatch } from '../store/feeds.ts'
import type { FeedOrder } from '../models/feed.ts'
import type { Records, Stores } from '../store/stores.ts'
import type { FeedRecord, ImageRecord } from '../models/records.ts'
import type { CreateFeed, UpdateFeed } from '../models/feed.ts'
import type { ContentStore } from '../content/store.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { isWalletAddress } from '../chain/signatures.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'
import { takenDown } from './moderation.ts'
import { coverImage, ingestImage, storedImage, type FetchLog } from './images.ts'
import type { Signer } from './auth.ts'

export const MAX_ACTIVE_FEEDS = 10

export interface FeedQuery {
  owner_id?: string
  category?: string
  tags?: string[]
  search?: string
  min_entries: number
  is_active?: boolean
  min_age?: number
  max_age?: number
  beforeId?: string
  order?: FeedOrder
  beforeRanked?: [bigint, string]
  limit: number
}

interface Deps {
  records: Records
  content: ContentStore
  defaultNetwork: string
  allowPrivateFetch: boolean
  /** Why an image_url fetch failed (the client gets one generic answer). */
  logFetch: FetchLog
}

const invalid = (field: string, message: string): never => fail('invalid_request', message, field)

const limitReached = (): never => fail('FEED_LIMIT_REACHED', `a wallet may own at most ${MAX_ACTIVE_FEEDS} active feeds`)

/** Counted under the owner's lock, so concurrent creates (or restores) on any engine cannot pass the limit. */
async function roomForOneMore(tx: Stores, ownerId: string): Promise<void> {
  await tx.feeds.lockOwner(ownerId)
  if ((await tx.feeds.activeCountOf(ownerId)) >= MAX_ACTIVE_FEEDS) limitReached()
}

export function feedService(d: Deps) {
  const read = d.records.read

  async function activeCategory(id: string | null | undefined): Promise<string | null> {
    if (id === undefined || id === null) return null
    const category = await read.categories.byId(id)
    if (!category) return invalid('category_id', 'category_id does not name a category')
    if (!category.is_active) return invalid('category_id', 'category_id names an inactive category')
    return category.id
  }

  async function get(id: string): Promise<FeedRecord> {
    const feed = (await read.feeds.byId(id)) ?? fail('FEED_NOT_FOUND', 'feed not found')
    return feed.taken_down ? takenDown('feed') : feed
  }

  /** Ends an owner's write to a feed the operator took down meanwhile: its transaction rolls back. */
  async function stillUp(tx: Stores, id: string): Promise<void> {
    if ((await tx.feeds.byId(id))!.taken_down) takenDown('feed')
  }

  async function owned(signer: Signer, feedId: string): Promise<FeedRecord> {
    const feed = await get(feedId)
    if (feed.owner_wallet_address.toLowerCase() !== signer.address.toLowerCase()) fail('UNAUTHORIZED', 'only the feed owner may do this')
    return feed
  }

  return {
    get,
    /** The feed's cover image. */
    async cover(id: string): Promise<ImageRecord> {
      const feed = await get(id)
      const image = feed.image_cid ? await coverImage(feed.image_cid, d.content, d.records) : null
      return image ?? fail('NOT_FOUND', 'this feed has no cover image')
    },
    /** The feed's cover when it is already recorded as an image here (no content read); null otherwise. */
    async knownCover(id: string): Promise<ImageRecord | null> {
      const feed = await read.feeds.byId(id)
      const cid = feed && !feed.taken_down ? feed.image_cid : null // a taken-down feed's: the route's 451
      return cid && !(await read.images.isTakenDown(cid)) ? read.images.byCid(cid) : null // a taken-down image's too
    },
    owned,

    async create(signer: Signer, input: CreateFeed): Promise<FeedRecord> {
      const categoryId = await activeCategory(input.category_id)
      // The image is fetched before the write transaction so a slow URL never holds the database.
      const imageCid = input.image_url ? await ingestImage(input.image_url, d.content, d.records, d.allowPrivateFetch, d.logFetch) : null
      const id = newId()
      await d.records.transact(async (tx) => {
        const now = nowSeconds()
        const ownerId = await tx.wallets.ensure(newId(), signer.address, signer.network ?? d.defaultNetwork, now)
        await roomForOneMore(tx, ownerId)
        await tx.feeds.insert({
          id,
          owner_id: ownerId,
          category_id: categoryId,
          name: input.name,
          description: input.description ?? null,
          image_cid: imageCid,
          tags: input.tags ?? [],
          now,
        })
      })
      return (await read.feeds.byId(id))!
    },

    async update(signer: Signer, feedId: string, changes: UpdateFeed): Promise<FeedRecord> {
      const feed = await owned(signer, feedId)
      const patch: FeedPatch = {}
      if (changes.name !== undefined) patch.name = changes.name
      if (changes.description !== undefined) patch.description = changes.description
      if (changes.tags !== undefined) patch.tags = changes.tags
      if (changes.category_id !== undefined) patch.category_id = await activeCategory(changes.category_id)
      if (changes.image_url !== undefined && changes.image_url !== null) {
        patch.image_cid = await ingestImage(changes.image_url, d.content, d.records, d.allowPrivateFetch, d.logFetch)
      } else if (changes.image_cid !== undefined) {
        patch.image_cid = changes.image_cid === null ? null : await storedImage(changes.image_cid, d.content, d.records, 'image_cid')
      }
      await d.records.transact(async (tx) => {
        const now = nowSeconds()
        const current = (await tx.feeds.byId(feed.id))!
        if (changes.is_active === true && !current.is_active) {
          await roomForOneMore(tx, current.owner_id)
          patch.is_active = true
          await tx.entries.reactivateAllIn(feed.id, now)
        } else if (changes.is_active === false) {
          patch.is_active = false
        }
        await tx.feeds.update(feed.id, patch, now)
        await stillUp(tx, feed.id)
      })
      return (await read.feeds.byId(feed.id))!
    },

    async remove(signer: Signer, feedId: string): Promise<void> {
      const feed = await owned(signer, feedId)
      await d.records.transact(async (tx) => {
        const now = nowSeconds()
        await tx.entries.deactivateAllIn(feed.id, now)
        await tx.feeds.update(feed.id, { is_active: false }, now)
        await stillUp(tx, feed.id)
      })
    },

    async list(q: FeedQuery): Promise<FeedRecord[]> {
      const lists = d.records.reads // a replica may serve it (store/records.ts)
      let categoryId: string | undefined
      if (q.category) {
        categoryId = (await (isUuid(q.category) ? lists.categories.byId(q.category) : lists.categories.byName(q.category)))?.id
        if (!categoryId) return []
      }
      let ownerId = q.owner_id === '' ? undefined : q.owner_id
      if (ownerId !== undefined && !isUuid(ownerId) && !isWalletAddress(ownerId))
        fail('INVALID_PARAMETER', 'invalid owner_id', 'owner_id must be a wallet id (UUID) or a 0x-prefixed address')
      if (ownerId !== undefined && isUuid(ownerId)) ownerId = ownerId.toLowerCase()
      else if (ownerId !== undefined) {
        ownerId = (await lists.wallets.byAddress(ownerId))?.id // owner_id also accepts the owner's address
        if (!ownerId) return []
      }
      const now = nowSeconds()
      return lists.feeds.list({
        ownerId,
        categoryId,
        tags: q.tags,
        search: q.search,
        minEntries: q.min_entries,
        isActive: q.is_active,
        createdBefore: q.min_age !== undefined ? now - q.min_age : undefined,
        createdAfter: q.max_age !== undefined ? now - q.max_age : undefined,
        beforeId: q.beforeId,
        order: q.order,
        beforeRanked: q.beforeRanked,
        limit: q.limit,
      })
    },
  }
}
export type FeedService = ReturnType<typeof feedService>
