// The search documents (migration 024): one per feed and per entry, written in the transaction that writes the feed
// or the entry, and found through the engine's full-text index. The statements that write them are the same on both
// engines; finding is the engine's own (SQLite's FTS5 here, PostgreSQL's tsvector in store/postgres/search.ts).
import { randomBytes } from 'node:crypto'
import { join, q, type Query, type Sql } from './query.ts'

export type SearchKind = 'feed' | 'entry'

/** A document's words. `body`: a free entry's text (never a paid one's); left as stored when not given. */
export interface SearchDoc {
  item_id: string
  kind: SearchKind
  feed_id: string
  name: string | null
  description: string | null
  tags: string[]
  body?: string
}

export interface SearchFilter {
  /** The words to find, each a run of letters, digits and marks: every one must be in a document. */
  words: string[]
  kind?: SearchKind
  categoryId?: string
  /** The last hit of the previous page (its rank and key): the next starts after it. */
  after?: { rank: number; key: string }
  limit: number
}

/** A document found, in order of relevance: `rank` ascending (the best first), then `key`. */
export interface SearchHit {
  item_id: string
  kind: SearchKind
  feed_id: string
  rank: number
  /** The engine's tie-break between equal ranks (SQLite: the document's key; PostgreSQL: item_id): a cursor's second half. */
  key: string
  /** Where the words are, from the indexed (public) text only, each match between « and ». */
  snippet: string
}

export interface SearchStore {
  /** Writes a feed's or entry's document (its words; its body too when given). */
  put(doc: SearchDoc): Promise<void>
  /** A free entry's text, indexed from now on. */
  setBody(itemId: string, body: string): Promise<void>
  /** Active, not taken down documents of active feeds that hold every word, the most relevant first. */
  find(filter: SearchFilter): Promise<SearchHit[]>
}

import { MARK_END, MARK_START } from '../models/search.ts'
export { MARK_END, MARK_START }

/**
 * A new document's key: random, positive (the migration's backfill took negative ones). It is only a key (documents are
 * found by item_id), so nothing needs to derive it again; 62 random bits make a clash a one-in-10^6 chance at 10^12 writes.
 */
const newDocKey = (): bigint => randomBytes(8).readBigUInt64BE() >> 2n

export const DOC_COLUMNS = q`(doc, item_id, kind, feed_id, name, description, tags, body)`
export const docValues = (d: SearchDoc) =>
  q`${newDocKey()}, ${d.item_id}, ${d.kind}, ${d.feed_id}, ${d.name ?? ''}, ${d.description ?? ''}, ${d.tags.join(' ')}, ${d.body ?? ''}`

/** A new entry's document: its words, and its text when it is free and has some (never a paid entry's). */
export const entryDoc = (e: {
  id: string
  feed_id: string
  title: string | null
  description: string | null
  tags: string[]
  is_free: boolean
  body_text?: string | null
}): SearchDoc => ({
  item_id: e.id,
  kind: 'entry',
  feed_id: e.feed_id,
  name: e.title,
  description: e.description,
  tags: e.tags,
  body: e.is_free ? (e.body_text ?? '') : '',
})

/** A feed's document: its name, description and tags. */
export const feedDoc = (f: { id: string; name: string; description: string | null; tags: string[] }): SearchDoc => ({
  item_id: f.id,
  kind: 'feed',
  feed_id: f.id,
  name: f.name,
  description: f.description,
  tags: f.tags,
})

/** Inserts the document, or updates its words (and body when given) if it is there. */
export const upsertDoc = (d: SearchDoc): Query =>
  q`INSERT INTO search_docs ${DOC_COLUMNS} VALUES (${docValues(d)}) ON CONFLICT (item_id) DO UPDATE SET name = excluded.name,
    description = excluded.description, tags = excluded.tags${d.body === undefined ? q`` : q`, body = excluded.body`}`

/** The conditions every hit meets, on `h` (the hits), `f` (their feeds) and `e` (their entries, for entries). */
export function shownOnly(filter: SearchFilter): Query {
  const where: Query[] = [q`f.is_active = 1`, q`f.taken_down = 0`, q`(h.kind = 'feed' OR (e.is_active = 1 AND e.taken_down = 0))`]
  if (filter.kind) where.push(q`h.kind = ${filter.kind}`)
  if (filter.categoryId) where.push(q`f.category_id = ${filter.categoryId}`)
  return join(where, ' AND ')
}

/** The hits' feeds and entries, to keep the shown ones (`h`: item_id, kind, feed_id, rank, key). */
export const HITS_JOINED = q`JOIN feeds f ON f.id = h.feed_id LEFT JOIN entries e ON h.kind = 'entry' AND e.id = h.item_id`

/**
 * The page's shown hits, best first, ranking only the best documents. `best(n)` is a query of the n best documents
 * after the cursor: item_id, kind, feed_id, rank, key, and `tiebreak` (the key as the engine orders it), in order of
 * rank, then tiebreak. Ranking every match and joining each to its feed and entry made a word held by 42k of 110k
 * documents cost 421 ms; the 104 best, 42 ms. When too few of them are shown (taken down, of another kind or
 * category) and more documents match, eight times as many are ranked.
 */
export async function bestShown(
  sql: Sql,
  filter: SearchFilter,
  best: (n: number) => Query,
  matching: () => Promise<number>,
): Promise<Omit<SearchHit, 'snippet'>[]> {
  for (let n = Math.max(64, filter.limit * 4); ; n *= 8) {
    const hits = await sql.all<Omit<SearchHit, 'snippet'>>(q`WITH h AS (${best(n)})
      SELECT h.item_id, h.kind, h.feed_id, h.rank, h.key FROM h ${HITS_JOINED} WHERE ${shownOnly(filter)}
      ORDER BY h.rank, h.tiebreak LIMIT ${filter.limit}`)
    if (hits.length === filter.limit || (await matching()) <= n)
      return hits.map((hit) => ({ ...hit, rank: Number(hit.rank), key: String(hit.key) }))
  }
}

/** Each hit of the page with its snippet (`snippets`: item_id and snippet of the page's documents). */
export function withSnippets(hits: Omit<SearchHit, 'snippet'>[], snippets: { item_id: string; snippet: string }[]): SearchHit[] {
  const byId = new Map(snippets.map((s) => [s.item_id, s.snippet]))
  return hits.map((hit) => ({ ...hit, snippet: byId.get(hit.item_id) ?? '' }))
}

/** The page's documents, for `IN (…)`. */
export const itemIds = (hits: { item_id: string }[]): Query =>
  join(
    hits.map((hit) => q`${hit.item_id}`),
    ', ',
  )

/** FTS5's query for the words: each a quoted string (a quote inside doubled), so no word is read as an operator. */
export const fts5Match = (words: string[]) => words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ')

export function searchStore(sql: Sql): SearchStore {
  return {
    put: async (doc) => void (await sql.run(upsertDoc(doc))),
    setBody: async (itemId, body) => void (await sql.run(q`UPDATE search_docs SET body = ${body} WHERE item_id = ${itemId}`)),
    async find(filter) {
      const match = fts5Match(filter.words)
      // bm25 is lower for a better match; the name counts most, then the tags, the description, the body. A cursor's key
      // is the document's key (an integer, as a string: it may be past what a JavaScript number holds exactly).
      const rank = q`bm25(search_fts, 10.0, 2.0, 4.0, 1.0)`
      const after =
        filter.after && /^-?[0-9]{1,19}$/.test(filter.after.key) ? { rank: filter.after.rank, key: BigInt(filter.after.key) } : undefined
      if (filter.after && !after) return []
      const afterCursor = after ? q` AND (${rank} > ${after.rank} OR (${rank} = ${after.rank} AND rowid > ${after.key}))` : q``
      const best = (n: number) => q`SELECT d.item_id, d.kind, d.feed_id, b.score AS rank, CAST(b.doc AS TEXT) AS key,
          b.doc AS tiebreak
        FROM (SELECT rowid AS doc, ${rank} AS score FROM search_fts WHERE search_fts MATCH ${match}${afterCursor}
          ORDER BY score, doc LIMIT ${n}) b JOIN search_docs d ON d.doc = b.doc`
      const matching = async () =>
        (await sql.get<{ n: number }>(q`SELECT count(*) AS n FROM search_fts WHERE search_fts MATCH ${match}`))!.n
      const hits = await bestShown(sql, filter, best, matching)
      if (hits.length === 0) return []
      // Snippets for the page only: FTS5 makes one from the column that matched best. The page's documents first (CROSS
      // JOIN keeps that order), by item_id.
      const snippets = await sql.all<{ item_id: string; snippet: string }>(q`SELECT d.item_id,
          snippet(search_fts, -1, ${MARK_START}, ${MARK_END}, '…', 24) AS snippet
        FROM search_docs d CROSS JOIN search_fts ON search_fts.rowid = d.doc
        WHERE search_fts MATCH ${match} AND d.item_id IN (${itemIds(hits)})`)
      return withSnippets(hits, snippets)
    },
  }
}
