// /v1/feeds: create, read, update, soft delete, list.
import { Elysia, t } from 'elysia'
import { CreateFeed, Feed, FeedSearch, Page, Text, UpdateFeed } from '../models/index.ts'
import type { FeedRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { DomainError, fail } from '../domain/errors.ts'
import { holdsNul } from '../lib/text.ts'
import { booleanQuery, integerQuery, uuid } from './params.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { serveContent } from './serve-content.ts'
import { passBody } from './passes.ts'
import { coverCacheControl } from './cover-images.ts'
import { nowSeconds } from '../lib/clock.ts'
import { isUuid } from '../lib/ids.ts'
import { page, pageQuery, pageSize, queryKey } from './pagination.ts'
import { contentResponses, errors, NoBody } from '../edge/openapi.ts'

// image_url may carry a 10 MB image as base64 (about 13.4 MB of text).
const IMAGE_BODY_LIMIT = 14 * 1024 * 1024

/** A feed on the wire: the record, its money as text. */
export const feedBody = ({ taken_down: _, pass, ...f }: FeedRecord): Feed => ({
  ...f,
  total_revenue: f.total_revenue.toString(),
  pass: pass && passBody(pass),
})

const feedKey = (id: string) => `feed:${id}`

/** GET /v1/feeds/{id} as JSON text, read and kept in the memo. */
export function feedJson(s: Services, rawId: string): Promise<string> {
  const id = uuid(rawId, 'feed_id')
  return s.cached.get(feedKey(id), async () => JSON.stringify(feedBody(await s.feeds.get(id))))
}

/** The same text when the memo holds it (the hot-read path answers from it, see routes/hot-reads.ts). */
export const heldFeedJson = (s: Services, rawId: string): string | undefined =>
  isUuid(rawId) ? s.cached.peek<string>(feedKey(rawId.toLowerCase())) : undefined

const FEED_LIST_PARAMETERS = [
  'page_size',
  'page_token',
  'owner_id',
  'category',
  'owner_wallet_address',
  'tags',
  'search',
  'min_entries',
  'is_active',
  'min_age',
  'max_age',
] as const
const feedListKey = (query: Record<string, unknown>) => `feeds${queryKey(query, FEED_LIST_PARAMETERS)}`

/**
 * A page of GET /v1/feeds as the route last answered it, when the memo holds it: the hot-read path answers the
 * market-wide list from it (routes/hot-reads.ts). The page is a function of its key, so the same text.
 */
export const heldFeedListJson = (s: Services, query: { page_size?: string; page_token?: string }): string | undefined =>
  s.cached.peek<string>(feedListKey(query))

const rejectBlankName = (name: string | undefined) => {
  if (typeof name === 'string' && name.trim() === '') fail('invalid_request', 'name must not be blank', 'name')
}

export const feedRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/feeds', tags: ['Feeds'] })
    .use(walletAuth(s.auth))
    .post(
      '',
      async ({ body, signer, set }) => {
        rejectBlankName(body.name)
        set.status = 201
        return feedBody(await s.feeds.create(signer, body))
      },
      {
        wallet: { bodyLimit: IMAGE_BODY_LIMIT },
        body: CreateFeed,
        response: { 201: Feed, ...errors(403, 451) },
        detail: {
          summary: 'Create a feed',
          description:
            'The caller becomes the owner; the wallet record is created on first use. image_url may be an ' +
            'http(s) URL, a data URI, base64 or a CID already stored here; an image taken down (the cover of ' +
            'a feed, or an entry, taken down) answers 451 TAKEN_DOWN.',
        },
      },
    )
    .get(
      '',
      async ({ query }) =>
        jsonResponse(
          await s.cached.get(feedListKey(query), async (staleFrom) => {
            // min_age and max_age are relative to now: such a page holds for the current second only.
            if (query.min_age !== undefined || query.max_age !== undefined) staleFrom(nowSeconds() + 1)
            const limit = pageSize(query.page_size)
            const scope = 'feeds'
            const beforeId = s.pages.decode<string>(scope, query.page_token)
            // Comma-separated (tags=a,b) or repeated (tags=a&tags=b, as the SDK sends them).
            const tags = [query.tags ?? []]
              .flat()
              .flatMap((t) => t.split(','))
              .map((tag) => tag.trim())
              .filter(Boolean)
            // Checked here, not by the schema: Elysia cannot decode this union when a pattern refuses one of its strings.
            if (holdsNul(tags)) throw new DomainError('INVALID_PARAMETER', 'invalid tags', 'tags must not contain NUL (U+0000)')
            const rows = await s.feeds.list({
              owner_id: query.owner_id ?? query.owner_wallet_address,
              category: query.category,
              tags,
              search: query.search?.trim() || undefined,
              // One owner's listing shows every feed of theirs, a new one with no entries too (the SDK's myFeeds()); the
              // market-wide listing hides empty feeds, as the hosted service does for both.
              min_entries: integerQuery(query.min_entries, 'min_entries') ?? ((query.owner_id ?? query.owner_wallet_address) ? 0 : 1),
              is_active: booleanQuery(query.is_active, 'is_active') ?? true,
              min_age: integerQuery(query.min_age, 'min_age'),
              max_age: integerQuery(query.max_age, 'max_age'),
              beforeId,
              limit: limit + 1,
            })
            const result = page(rows, limit, s.pages, scope, (last) => last.id)
            return JSON.stringify({ data: result.data.map(feedBody), pagination: result.pagination })
          }),
        ),
      {
        query: t.Object({
          ...pageQuery,
          owner_id: t.Optional(t.String({ description: 'owner wallet id (or address)' })),
          category: t.Optional(Text({ description: 'category id or name' })),
          owner_wallet_address: t.Optional(t.String({ description: 'owner address (as the SDK sends it)' })),
          tags: t.Optional(
            t.Union([t.String(), t.Array(t.String())], { description: 'comma-separated or repeated; feeds with any of them' }),
          ),
          search: t.Optional(FeedSearch),
          min_entries: t.Optional(
            t.String({ description: 'minimum active entries (default 1; 0 when owner_id or owner_wallet_address is given)' }),
          ),
          is_active: t.Optional(t.String({ description: 'true (default) or false' })),
          min_age: t.Optional(t.String({ description: 'created at least this many seconds ago' })),
          max_age: t.Optional(t.String({ description: 'created at most this many seconds ago' })),
        }),
        response: { 200: Page(Feed), ...errors(422) },
        detail: { summary: 'List feeds', description: 'Newest first, cursor paginated.' },
      },
    )
    .get('/:feed_id', async ({ params }) => jsonResponse(await feedJson(s, params.feed_id)), {
      response: { 200: Feed, ...errors(404) },
      detail: { summary: 'Get a feed' },
    })
    .get(
      '/:feed_id/image',
      async ({ params, query, request }) => {
        const image = await s.feeds.cover(uuid(params.feed_id, 'feed_id'))
        return serveContent(s.content, image, request, coverCacheControl(query.cid, image))
      },
      {
        query: t.Object({ cid: t.Optional(t.String({ description: "the feed's image_cid: the answer is then cached as immutable" })) }),
        response: { ...contentResponses('The image'), ...errors(404) },
        detail: {
          summary: "Get a feed's cover image",
          description:
            'The stored image (PNG, JPEG, GIF, WebP or SVG) with its type, ETag = CID, ranges and ' +
            'conditional requests; nosniff, and SVG sandboxed. 404 NOT_FOUND when the feed has none; 451 ' +
            'TAKEN_DOWN while the feed is taken down, or the image is (as the cover of a feed, or an entry, ' +
            'taken down).',
        },
      },
    )
    .patch(
      '/:feed_id',
      async ({ params, body, signer }) => {
        rejectBlankName(body.name)
        return feedBody(await s.feeds.update(signer, uuid(params.feed_id, 'feed_id'), body))
      },
      {
        wallet: { bodyLimit: IMAGE_BODY_LIMIT },
        body: UpdateFeed,
        response: { 200: Feed, ...errors(403, 404) },
        detail: {
          summary: 'Update a feed (owner)',
          description: 'Only the given fields change; is_active=true reactivates a deleted feed and its entries.',
        },
      },
    )
    .delete(
      '/:feed_id',
      async ({ params, signer }) => {
        await s.feeds.remove(signer, uuid(params.feed_id, 'feed_id'))
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Deleted'), ...errors(403, 404) },
        detail: {
          summary: 'Delete a feed (owner)',
          description: 'Soft delete: the feed and its entries become inactive and leave listings.',
        },
      },
    )
