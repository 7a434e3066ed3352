// Finding search documents on PostgreSQL: the generated tsvector column of search_docs and its GIN index (migration
// 024), the words as plainto_tsquery reads them (every word, no operators, whatever the text), ranked by ts_rank_cd.
import { q, type Sql } from '../query.ts'
import { bestShown, itemIds, MARK_END, MARK_START, searchStore, withSnippets, type SearchStore } from '../search.ts'

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
      const rank = q`-(ts_rank_cd(${WEIGHTS}::float4[], d.document, w.query)::float8)`
      const after = filter.after
      const afterCursor = after ? q`WHERE (b.rank > ${after.rank} OR (b.rank = ${after.rank} AND b.key > ${after.key}))` : q``
      const best = (n: number) => q`SELECT * FROM (
          SELECT d.item_id, d.kind, d.feed_id, ${rank} AS rank, d.item_id AS key, d.item_id AS tiebreak
          FROM search_docs d, plainto_tsquery('english', ${text}) AS w (query) WHERE d.document @@ w.query) b
        ${afterCursor} ORDER BY b.rank, b.key LIMIT ${n}`
      const matching = async () =>
        Number(
          (await sql.get<{ n: number }>(q`SELECT count(*) AS n FROM search_docs WHERE document @@ plainto_tsquery('english', ${text})`))!.n,
        )
      const hits = await bestShown(sql, filter, best, matching)
      if (hits.length === 0) return []
      // Headlines for the page only, over the document's text (its first 16 KiB of body: ts_headline reads it all).
      const snippets = await sql.all<{ item_id: string; snippet: string }>(q`SELECT d.item_id, ts_headline('english',
          concat_ws(' — ', NULLIF(d.name, ''), NULLIF(d.description, ''), NULLIF(d.tags, ''), NULLIF(left(d.body, 16384), '')),
          plainto_tsquery('english', ${text}), ${HEADLINE}) AS snippet
        FROM search_docs d WHERE d.item_id IN (${itemIds(hits)})`)
      return withSnippets(hits, snippets)
    },
  }
}
