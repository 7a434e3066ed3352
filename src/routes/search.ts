// /v1/search: full-text search over feeds and entries, the most relevant first, cursor paginated.
import { Elysia, t } from 'elysia'
import { Page, SearchResult, SearchText, SearchType } from '../models/index.ts'
import { cursorAfter, type SearchCursor, type SearchItem } from '../domain/search.ts'
import type { Services } from './services.ts'
import { isFreeNow } from '../domain/entries.ts'
import { nowSeconds } from '../lib/clock.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { errors } from '../edge/openapi.ts'
import { page, pageQuery, pageSize, queryKey } from './pagination.ts'
import { feedBody } from './feeds.ts'
import { entryBody } from './entries.ts'

const SEARCH_PARAMETERS = ['q', 'type', 'category', 'page_size', 'page_token'] as const

const resultBody = (item: SearchItem, now: number): SearchResult => ({
  type: item.kind,
  snippet: item.snippet,
  feed: feedBody(item.feed),
  entry: item.entry && entryBody(item.entry, now),
})

export const searchRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/search', tags: ['Search'] }).get(
    '',
    async ({ query }) =>
      jsonResponse(
        await s.cached.get(`search${queryKey(query, SEARCH_PARAMETERS)}`, async (staleFrom) => {
          const now = nowSeconds()
          const limit = pageSize(query.page_size)
          // A token names its query: one page's token cannot continue another search.
          const scope = `search:${JSON.stringify([query.q, query.type ?? null, query.category ?? null])}`
          const cursor = s.pages.decode<SearchCursor>(scope, query.page_token)
          const items = await s.search.search({
            q: query.q,
            type: query.type,
            category: query.category,
            after: cursor,
            limit: limit + 1,
          })
          const result = page(items, limit, s.pages, scope, cursorAfter)
          // is_free and price change when a paid entry's early access ends.
          for (const { entry } of result.data) if (entry && !isFreeNow(entry, now) && entry.expires_at !== null) staleFrom(entry.expires_at)
          return JSON.stringify({ data: result.data.map((item) => resultBody(item, now)), pagination: result.pagination })
        }),
      ),
    {
      query: t.Object({
        q: SearchText,
        type: t.Optional(SearchType),
        category: t.Optional(t.String({ description: 'a category id or name: its feeds, and the entries of its feeds' })),
        ...pageQuery,
      }),
      response: { 200: Page(SearchResult), ...errors(422) },
      detail: {
        summary: 'Search feeds and entries',
        description:
          'Full-text search (SQLite FTS5 or PostgreSQL tsvector), the most relevant first: feed names, ' +
          'descriptions and tags; entry titles, descriptions and tags; and the text of free text/plain, ' +
          "text/markdown, text/html and application/json entries (never a paid entry's content). Every word " +
          'of q must match (English stemming: "recipes" finds "recipe"). Active feeds and their active entries only, ' +
          'never a taken-down one. 400 INVALID_PARAMETER when q is missing, over 200 characters or holds no word.',
      },
    },
  )
