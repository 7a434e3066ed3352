// Finding search documents on PostgreSQL: the generated tsvector column of search_docs and its GIN index (migration
// 024), the words as plainto_tsquery reads them (every word, no operators, whatever the text), ranked by ts_rank_cd.
import { join, q, type Sql } from '../query.ts'
import { HITS_JOINED, MARK_END, MARK_START, searchStore, shownOnly, type SearchHit, type SearchStore } from '../search.ts'

// ts_rank_cd's weights for D (body), C (description), B (tags), A (name): a word in a name outweighs it in a body
// a hundred times, as bm25's column weights make it on SQLite.
const WEIGHTS = '{0.01, 0.2, 0.4, 1.0}'
const HEADLINE = `StartSel=${MARK_START}, StopSel=${MARK_END}, MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…`

export function postgresSearchStore(sql: Sql): SearchStore {
  return {
    ...searchStore(sql),
    async find(filter) {
      const text = filter.words.join(' ')
      // Negated, so that lower is better as bm25's: one order and one cursor for both engines. float8 round-trips exactly.
      const ranked = await sql.all<Omit<SearchHit, 'snippet'>>(q`WITH h AS (
          SELECT d.item_id, d.kind, d.feed_id, -(ts_rank_cd(${WEIGHTS}::float4[], d.document, w.query)::float8) AS rank
          FROM search_docs d, plainto_tsquery('english', ${text}) AS w (query) WHERE d.document @@ w.query)
        SELECT h.item_id, h.kind, h.feed_id, h.rank FROM h ${HITS_JOINED} WHERE ${shownOnly(filter)}
        ORDER BY h.rank, h.item_id LIMIT ${filter.limit}`)
      if (ranked.length === 0) return []
      // Headlines for the page only, over the document's text (its first 16 KiB of body: ts_headline reads it all).
      const snippets = await sql.all<{ item_id: string; snippet: string }>(q`SELECT d.item_id, ts_headline('english',
          concat_ws(' — ', NULLIF(d.name, ''), NULLIF(d.description, ''), NULLIF(d.tags, ''), NULLIF(left(d.body, 16384), '')),
          plainto_tsquery('english', ${text}), ${HEADLINE}) AS snippet
        FROM search_docs d WHERE d.item_id IN (${join(
          ranked.map((hit) => q`${hit.item_id}`),
          ', ',
        )})`)
      const byId = new Map(snippets.map((s) => [s.item_id, s.snippet]))
      return ranked.map((hit) => ({ ...hit, rank: Number(hit.rank), snippet: byId.get(hit.item_id) ?? '' }))
    },
  }
}
