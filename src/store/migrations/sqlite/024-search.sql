-- Full-text search (GET /v1/search, issue 38): one document per feed and per entry, its words (a feed's name, an
-- entry's title; the description; the tags, space-separated) and, for a free entry whose content is text, the first
-- 64 KiB of that text (`body`; a paid entry's is always empty, so nothing of it is indexed or shown). The stores
-- write a document in the transaction that writes its feed or entry (store/search.ts); whether it is shown is
-- decided by its feed's and entry's rows at query time (active, not taken down), so no other write touches it.
-- `doc` is a random key of the store's choosing, the integer FTS5 needs: an explicit INTEGER PRIMARY KEY keeps it
-- through VACUUM, which may renumber an implicit rowid.
CREATE TABLE search_docs (
  doc INTEGER PRIMARY KEY,
  item_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  feed_id TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT ''
);
-- The engine's full-text index of those documents (FTS5, external content: it keeps the index, search_docs the text).
-- Porter stemming, case folded, accents kept: as PostgreSQL's 'english' configuration reads them (024 there).
CREATE VIRTUAL TABLE search_fts USING fts5(
  name, description, tags, body,
  content = 'search_docs', content_rowid = 'doc', tokenize = 'porter unicode61 remove_diacritics 0'
);
CREATE TRIGGER search_fts_insert AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, name, description, tags, body) VALUES (new.doc, new.name, new.description, new.tags, new.body);
END;
CREATE TRIGGER search_fts_delete AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, name, description, tags, body)
    VALUES ('delete', old.doc, old.name, old.description, old.tags, old.body);
END;
CREATE TRIGGER search_fts_update AFTER UPDATE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, name, description, tags, body)
    VALUES ('delete', old.doc, old.name, old.description, old.tags, old.body);
  INSERT INTO search_fts (rowid, name, description, tags, body) VALUES (new.doc, new.name, new.description, new.tags, new.body);
END;
-- The feeds and entries already there, by their words (their bodies are in the content store, out of SQL's reach:
-- entries published before this step are found by their words only). Negative keys: the store's are positive.
INSERT INTO search_docs (doc, item_id, kind, feed_id, name, description, tags)
  SELECT -ROW_NUMBER() OVER (ORDER BY kind, id), id, kind, feed_id, name, description, tags FROM (
    SELECT id, 'feed' AS kind, id AS feed_id, name, COALESCE(description, '') AS description,
      COALESCE((SELECT group_concat(value, ' ') FROM json_each(f.tags)), '') AS tags FROM feeds f
    UNION ALL
    SELECT id, 'entry', feed_id, COALESCE(title, ''), COALESCE(description, ''),
      COALESCE((SELECT group_concat(value, ' ') FROM json_each(e.tags)), '') FROM entries e
  );
