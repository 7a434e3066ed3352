import { Type as t, type Static } from '@sinclair/typebox'
import { Nullable, OneOf, Text } from './common.ts'
import { Feed } from './feed.ts'
import { Entry } from './entry.ts'

/** What GET /v1/search finds: feeds, entries, or (type left out) both in one ranking. */
export const SEARCH_TYPES = ['feed', 'entry'] as const
/** Words of a query past these are not searched for. */
export const MAX_SEARCH_WORDS = 32

export const SearchText = Text({
  minLength: 1,
  maxLength: 200,
  description:
    'the words to find (every one must be there; quotes and operators are read as spaces): in feed names, ' +
    "descriptions and tags, entry titles, descriptions and tags, and free text entries' content",
})
export const SearchType = OneOf(SEARCH_TYPES, { description: 'feed or entry; both when left out' })

export const SearchResult = t.Object(
  {
    type: SearchType,
    snippet: t.String({
      description:
        'plain text around the match, each matched word between « and »; from public text only (never a ' + "paid entry's content)",
    }),
    feed: Feed,
    entry: Nullable(Entry, { description: 'the entry found (type entry), or null for a feed' }),
  },
  { description: 'A search hit: a feed, or an entry with its feed' },
)
export type SearchResult = Static<typeof SearchResult>

/** The match marks of snippets: plain characters, so a snippet can carry no markup of ours. */
export const MARK_START = '«'
export const MARK_END = '»'
