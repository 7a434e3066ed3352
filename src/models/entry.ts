import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, TagList, Text, UnixSeconds } from './common.ts'

export const MAX_CONTENT_BASE64_CHARS = 50 * 1024 * 1024
/** The most content 50 MB of base64 carries (37.5 MiB): the limit of a form's content part too. */
export const MAX_CONTENT_BYTES = (MAX_CONTENT_BASE64_CHARS / 4) * 3

export const SUPPORTED_MIME_TYPES = [
  'text/plain',
  'text/markdown',
  'text/html',
  'application/json',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/svg+xml',
  'video/mp4',
  'video/quicktime',
  'video/webm',
  'audio/mpeg',
  'audio/wav',
  'audio/ogg',
  'application/pdf',
] as const

/**
 * A price below the network's typical settlement cost (domain/cheap-prices.ts): said in the answer of a write that
 * sets or keeps such a price, beside the Trellis-Warning header that carries the same. Optional, so clients that know
 * only the seed's fields read the answer as before.
 */
export const PriceWarning = t.Object(
  {
    code: t.Literal('price_below_settlement_cost'),
    message: t.String({ description: 'for people: what the price costs to settle, and a pass as the answer' }),
    settlement_cost: t.String({
      pattern: '^[0-9]+$',
      description: "what one settlement typically costs on this server's network (an estimate), smallest unit",
      examples: ['1400'],
    }),
    network: t.String({ description: "this server's network" }),
  },
  {
    description:
      "A price below what settling one payment typically costs on this server's network: every sale loses money. Only in " +
      'the answer of a create, an edit or a pass PUT that leaves such a price',
  },
)
export type PriceWarning = Static<typeof PriceWarning>

/** Headers of an answer that may warn about a cheap price (the same as price_warning, as an RFC 8941 item). */
export const PriceWarningHeaders = {
  'trellis-warning': t.Optional(
    t.String({
      description:
        'present when the price is below the settlement cost: price_below_settlement_cost;cost=<smallest units>;' +
        'network="<network>";message="<text>"',
    }),
  ),
}

export const Entry = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    feed_id: t.String(),
    cid: t.String({ description: 'the content on the private IPFS store (a paid entry: the CID of its encrypted copy, not of its bytes)' }),
    mime_type: t.String(),
    title: Nullable(t.String()),
    description: Nullable(t.String()),
    metadata: Nullable(t.String({ description: 'opaque text, usually JSON' })),
    tags: t.Array(t.String()),
    is_free: t.Boolean({ description: 'true for free entries, and for paid ones once expires_at has passed' }),
    expires_at: Nullable(UnixSeconds('end of early access: a paid entry becomes free then')),
    is_active: t.Boolean(),
    total_purchases: t.Integer(),
    total_revenue: Money(),
    price: Money('smallest unit; "0" for free entries'),
    asset: t.String({ description: 'USDC' }),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
    content_url: t.Optional(t.String({ description: 'signed URL of the bytes, valid one hour (only when the caller may read them)' })),
    price_warning: t.Optional(PriceWarning),
  },
  { description: 'An entry' },
)
export type Entry = Static<typeof Entry>

export const Price = t.Object({
  amount: t.Union([t.String(), t.Integer()], { description: 'smallest unit, digits (1000000 = 1 USDC)' }),
  currency: t.Optional(t.String({ description: 'USDC' })),
  network: t.Optional(t.String({ description: "this server's network (base or base-sepolia)" })),
})
export type Price = Static<typeof Price>

/** The fields an entry's owner writes besides its content, at create and at every edit. */
const entryWords = {
  title: t.Optional(Nullable(Text({ maxLength: 500 }))),
  description: t.Optional(Nullable(Text({ maxLength: 10_000 }))),
  metadata: t.Optional(Nullable(Text({ maxLength: 10_000, description: 'opaque text, usually JSON' }))),
  tags: t.Optional(TagList()),
  price: t.Optional(Nullable(Price)),
}

export const CreateEntry = t.Object(
  {
    content_base64: t.String({ description: 'the content in base64, at most 50 MB of base64 text' }),
    mime_type: t.String({ description: `one of ${SUPPORTED_MIME_TYPES.join(', ')}` }),
    ...entryWords,
    is_free: t.Optional(t.Boolean({ description: 'default true' })),
    expires_at: t.Optional(Nullable(t.Integer({ description: 'Unix seconds; a paid entry becomes free then' }))),
  },
  {
    // Body validation failures name the rule they broke.
    'x-field-codes': {
      price: 'INVALID_PRICE',
      mime_type: 'UNSUPPORTED_MIME_TYPE',
      content_base64: 'INVALID_BASE64',
      expires_at: 'INVALID_EXPIRES_AT',
    },
  },
)
export type CreateEntry = Static<typeof CreateEntry>

const { content_base64: _, mime_type: __, ...createFields } = CreateEntry.properties
/**
 * The create-entry body as multipart/form-data, for the document only: the parts become CreateEntry (the content as
 * content_base64) and are validated as such. Tags are repeated parts; price is JSON text or price.amount,
 * price.currency, price.network parts; is_free is true or false; an empty part of a field that takes no text is none.
 */
export const CreateEntryForm = t.Object(
  {
    content: t.String({
      format: 'binary',
      description: `the content, a file part (with a filename), at most ${MAX_CONTENT_BYTES} bytes; once`,
    }),
    mime_type: t.Optional(t.String({ description: "one of the supported types; default: the content part's Content-Type" })),
    ...createFields,
  },
  { description: 'An entry to create, as a form: `curl -F content=@file -F title=…`' },
)

/** What may change after publishing: the words and the price. The content (and its type) never changes. */
export const UpdateEntry = t.Object(
  {
    ...entryWords,
    is_free: t.Optional(t.Boolean({ description: 'false makes a free entry paid (it needs a price), true makes a paid entry free' })),
    expires_at: t.Optional(Nullable(t.Integer({ description: 'Unix seconds, in the future; null: paid until changed' }))),
    content_base64: t.Optional(t.Unknown({ description: 'refused: content is immutable (create a new entry)' })),
    mime_type: t.Optional(t.Unknown({ description: 'refused: content is immutable (create a new entry)' })),
  },
  {
    'x-field-codes': { price: 'INVALID_PRICE', expires_at: 'INVALID_EXPIRES_AT' },
  },
)
export type UpdateEntry = Static<typeof UpdateEntry>
