-- Full-text search (GET /v1/search, issue 38): one document per feed and per entry, its words (a feed's name, an
-- entry's title; the description; the tags, space-separated) and, for a free entry whose content is text, the first
-- 64 KiB of that text (`body`; a paid entry's is always empty, so nothing of it is indexed or shown). The stores
-- write a document in the transaction that writes its feed or entry (store/search.ts); whether it is shown is
-- decided by its feed's and entry's rows at query time (active, not taken down), so no other write touches it.
-- `doc` is a random key of the store's choosing (the integer SQLite's FTS5 index needs; here only a key).
CREATE TABLE search_docs (
  doc bigint PRIMARY KEY,
  item_id text COLLATE "C" NOT NULL UNIQUE,
  kind text COLLATE "C" NOT NULL,
  feed_id text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL DEFAULT '',
  description text COLLATE "C" NOT NULL DEFAULT '',
  tags text COLLATE "C" NOT NULL DEFAULT '',
  body text COLLATE "C" NOT NULL DEFAULT '',
  -- The engine's full-text index of the document, kept by PostgreSQL itself (SQLite's is the FTS5 table search_fts):
  -- the name weighs most (A), then the tags (B), the description (C), the body (D); 'english' stems as FTS5's porter.
  document tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', tags), 'B') ||
    setweight(to_tsvector('english', description), 'C') || setweight(to_tsvector('english', body), 'D')
  ) STORED
);
CREATE INDEX search_docs_document ON search_docs USING gin (document);
-- Search answers are kept in the read memo: a document written on any instance is a change (011).
CREATE TRIGGER search_docs_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON search_docs
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
-- The feeds and entries already there, by their words (their bodies are in the content store, out of SQL's reach:
-- entries published before this step are found by their words only). Negative keys: the store's are positive.
INSERT INTO search_docs (doc, item_id, kind, feed_id, name, description, tags)
  SELECT -ROW_NUMBER() OVER (ORDER BY kind, id), id, kind, feed_id, name, description, tags FROM (
    SELECT id, 'feed' AS kind, id AS feed_id, name, COALESCE(description, '') AS description,
      COALESCE((SELECT string_agg(value, ' ') FROM json_array_elements_text(f.tags::json)), '') AS tags FROM feeds f
    UNION ALL
    SELECT id, 'entry', feed_id, COALESCE(title, ''), COALESCE(description, ''),
      COALESCE((SELECT string_agg(value, ' ') FROM json_array_elements_text(e.tags::json)), '') FROM entries e
  ) AS items;
