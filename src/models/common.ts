// The vocabulary shared by every layer: what a resource looks like on the wire, as one TypeBox schema each. The
// routes validate and document with these, the domain takes their Static types, the stores return records typed
// from them. This folder holds schemas only (no rules) and imports nothing but TypeBox, so any layer may use it.
import { Type as t, type StringOptions, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'

export const UnixSeconds = (description = 'Unix seconds') => t.Integer({ description, examples: [1767225600] })
export const Money = (description = 'USDC in its smallest unit (1000000 = 1 USDC), as a decimal string') =>
  t.String({ pattern: '^[0-9]+$', description, examples: ['2500000'] })
/** A count that the hosted service sends as a decimal string (leaderboards). */
export const CountText = (description?: string) => t.String({ pattern: '^[0-9]+$', description, examples: ['12'] })
export const Address = (description = '0x address') => t.String({ pattern: '^0x[0-9a-fA-F]{40}$', description })
/**
 * A pattern for text a request stores or looks up: no NUL (U+0000). PostgreSQL's text cannot hold it, so it is refused
 * on every engine alike (400, in the route's error shape; edge/errors.ts names the rule). With `more`, also that pattern.
 */
export const noNul = (more?: string): string => (more ? `^(?![\\s\\S]*\\u0000)[\\s\\S]*?(?:${more})` : '^[^\\u0000]*$')
/** A string of a request that is stored or looked up: no NUL (see noNul). */
export const Text = (options: StringOptions = {}) => t.String({ ...options, pattern: noNul(options.pattern) })
export const TagList = (options: { error?: string } = {}) =>
  t.Array(Text({ minLength: 1, maxLength: 100 }), { maxItems: 20, description: 'at most 20 tags of 1-100 characters', ...options })
/** A nullable value, written `T | null`. */
export const Nullable = <T extends TSchema>(schema: T, options: { description?: string; error?: string } = {}) =>
  t.Union([schema, t.Null()], options)

/** Items in a page of a listing: at most MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE when the caller does not say. */
type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K] & string> }
type UnionOf<T extends readonly string[]> = Literals<T> extends infer L extends TSchema[] ? TUnion<L> : never
/** One of a word list declared once (`as const`): the list stays the single source of the words. */
export const OneOf = <const T extends readonly string[]>(words: T, options: { description?: string } = {}) =>
  t.Union(
    words.map((word) => t.Literal(word)),
    options,
  ) as unknown as UnionOf<T>

export const DEFAULT_PAGE_SIZE = 20
export const MAX_PAGE_SIZE = 100

export const Pagination = t.Object({
  page_size: t.Integer({ description: 'items in this page' }),
  next_page_token: t.Union([t.String(), t.Null()], { description: 'pass as page_token for the next page; null on the last' }),
  has_more: t.Boolean(),
})

/** `{data: [...], pagination}`: the cursor-paginated list of an item. */
export const Page = <T extends TSchema>(item: T, description?: string) =>
  t.Object({ data: t.Array(item), pagination: Pagination }, { description })

/** Shape A: every error except feed body validation. */
export const ErrorBody = t.Object(
  {
    error: t.String({ description: 'what went wrong, for people' }),
    code: t.String({ description: 'what went wrong, for programs: a stable UPPER_SNAKE code' }),
    details: t.Optional(t.String()),
  },
  { description: 'An error' },
)

/** Shape B: a create/update feed body that fails validation. */
export const FieldErrorBody = t.Object(
  {
    error: t.Literal('invalid_request'),
    message: t.String(),
    details: t.Object({ field: t.String() }),
  },
  { description: 'A feed body that failed validation' },
)
