// Full-text search over feeds and entries (GET /v1/search): the words of a query, the category it is narrowed to,
// and the hits with their feeds and entries as the listings show them. Which documents exist and what they hold is
// the stores' (store/search.ts): a feed's and an entry's words, a free entry's text, never a paid entry's content.
import type { Records } from '../store/stores.ts'
import type { SearchKind } from '../store/search.ts'
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import { MAX_SEARCH_WORDS } from '../models/search.ts'
import { isUuid } from '../lib/ids.ts'
import { fail } from './errors.ts'

export interface SearchInput {
  q: string
  type?: SearchKind
  /** A category id or name: feeds of it, and entries of its feeds. */
  category?: string
  after?: SearchCursor
  limit: number
}

/** Where the next page starts (a page token's content): the last hit's rank and the engine's key for it. */
export type SearchCursor = { r: number; i: string }

export interface SearchItem {
  kind: SearchKind
  rank: number
  key: string
  snippet: string
  feed: FeedRecord
  entry: EntryRecord | null
}

/**
 * The words of a query: runs of letters, digits and marks, as both engines' tokenizers split text (everything else,
 * quotes and operators included, only parts words). At most MAX_SEARCH_WORDS.
 */
export const searchWords = (q: string): string[] => (q.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS)

/** The cursor that continues after `item`. */
export const cursorAfter = (item: SearchItem): SearchCursor => ({ r: item.rank, i: item.key })

export function searchService(d: { records: Records }) {
  const read = d.records.reads // reads only: a replica may serve them (store/records.ts)
  return {
    async search(input: SearchInput): Promise<SearchItem[]> {
      const words = searchWords(input.q)
      if (words.length === 0) fail('INVALID_PARAMETER', 'invalid q', 'q must hold at least one word (letters or digits)')
      let categoryId: string | undefined
      if (input.category) {
        const category = await (isUuid(input.category)
          ? read.categories.byId(input.category.toLowerCase())
          : read.categories.byName(input.category))
        if (!category) return []
        categoryId = category.id
      }
      const hits = await read.search.find({
        words,
        kind: input.type,
        categoryId,
        after: input.after && { rank: input.after.r, key: input.after.i },
        limit: input.limit,
      })
      const items: SearchItem[] = []
      for (const hit of hits) {
        // Read after the hits: a feed or entry changed in between is shown as it is now, or left out when it went away.
        const feed = await read.feeds.byId(hit.feed_id)
        const entry = hit.kind === 'entry' ? await read.entries.byId(hit.item_id) : null
        if (!feed?.is_active || feed.taken_down || (hit.kind === 'entry' && (!entry?.is_active || entry.taken_down))) continue
        items.push({ kind: hit.kind, rank: hit.rank, key: hit.key, snippet: hit.snippet, feed, entry: entry ?? null })
      }
      return items
    },
  }
}
export type SearchService = ReturnType<typeof searchService>
