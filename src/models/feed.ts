import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, TagList, Text, UnixSeconds } from './common.ts'
import { PassOffer } from './pass.ts'

export const Feed = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    owner_id: t.String({ description: "the owner's wallet id" }),
    owner_wallet_address: t.String(),
    category_id: Nullable(t.String()),
    name: t.String(),
    description: Nullable(t.String()),
    image_cid: Nullable(t.String({ description: 'the cover image, served at /v1/feeds/{id}/image' })),
    is_active: t.Boolean(),
    total_entries: t.Integer({ description: 'active entries' }),
    total_purchases: t.Integer(),
    total_revenue: Money(),
    tags: t.Array(t.String()),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
    pass: Nullable(PassOffer, { description: 'the pass on sale (PUT /v1/feeds/{id}/pass), or null' }),
  },
  { description: 'A feed' },
)
export type Feed = Static<typeof Feed>

const FeedTags = TagList({ error: 'tags must be an array of at most 20 strings' })
const Description = t.Optional(Nullable(Text({ maxLength: 2000, error: 'description must be at most 2000 characters' })))
const CategoryId = t.Optional(Nullable(t.String({ format: 'uuid', error: 'category_id must be a UUID' })))
// image_url may carry a 10 MB image as base64 (about 13.4 MB of text).
const ImageUrl = t.Optional(
  Nullable(
    Text({
      maxLength: 14_000_000,
      error: 'image_url must be a string',
      description:
        'an http(s) URL, a data URI, base64, or the CID of an image already stored here; PNG, JPEG, GIF, WebP or SVG, at most 10 MB',
    }),
  ),
)

/** The words a feed listing searches for in names and descriptions (GET /v1/feeds?search=). */
export const FeedSearch = Text({ maxLength: 200, description: 'words the name or description holds (A-Z case-insensitive)' })

// Validation failures of these two bodies are answered in shape B (x-error-shape, see edge/errors.ts).
export const CreateFeed = t.Object(
  {
    name: Text({ minLength: 1, maxLength: 255, error: 'name is required and must be 1-255 characters' }),
    description: Description,
    tags: t.Optional(FeedTags),
    category_id: CategoryId,
    image_url: ImageUrl,
  },
  { 'x-error-shape': 'B' },
)
export type CreateFeed = Static<typeof CreateFeed>

export const UpdateFeed = t.Object(
  {
    name: t.Optional(Text({ minLength: 1, maxLength: 255, error: 'name must be 1-255 characters' })),
    description: Description,
    tags: t.Optional(FeedTags),
    is_active: t.Optional(
      t.Boolean({ error: 'is_active must be a boolean', description: 'true reactivates a deleted feed and its entries' }),
    ),
    category_id: CategoryId,
    image_cid: t.Optional(
      Nullable(Text({ error: 'image_cid must be a CID string', description: 'the CID of an image stored here; null removes the cover' })),
    ),
    image_url: ImageUrl,
  },
  { 'x-error-shape': 'B' },
)
export type UpdateFeed = Static<typeof UpdateFeed>

/** How a listing of feeds is ordered: newest first (by id), or by purchases or revenue, most first, then newest. */
export const FEED_ORDERS = ['newest', 'purchases', 'revenue'] as const
export type FeedOrder = (typeof FEED_ORDERS)[number]
