-- Indexes for the hot reads of a large market.

-- Tag filters: one row per feed and tag (lower case), kept in step with feeds.tags by triggers. Lower case as SQLite's
-- lower() makes it, ASCII letters only: a JSON element is text of the database's default collation, and lower()
-- under any other than "C" folds non-ASCII letters too (É → é), which the embedded engine never does.
CREATE TABLE feed_tags (
  tag_lc text COLLATE "C" NOT NULL,
  feed_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tag_lc, feed_id)
);
CREATE INDEX feed_tags_feed ON feed_tags (feed_id);

CREATE FUNCTION feeds_tags_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO feed_tags (tag_lc, feed_id) SELECT lower(value COLLATE "C"), NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER feeds_tags_insert AFTER INSERT ON feeds FOR EACH ROW EXECUTE FUNCTION feeds_tags_insert();

-- Fires when an UPDATE sets tags, changed or not (as SQLite's UPDATE OF does).
CREATE FUNCTION feeds_tags_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM feed_tags WHERE feed_id = NEW.id;
  INSERT INTO feed_tags (tag_lc, feed_id) SELECT lower(value COLLATE "C"), NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER feeds_tags_update AFTER UPDATE OF tags ON feeds FOR EACH ROW EXECUTE FUNCTION feeds_tags_update();

INSERT INTO feed_tags (tag_lc, feed_id) SELECT lower(j.value COLLATE "C"), f.id FROM feeds f, jsonb_array_elements_text(f.tags::jsonb) AS j (value) ON CONFLICT DO NOTHING;

-- Listings by category or owner, newest first.
CREATE INDEX feeds_category_newest ON feeds (category_id, id);
CREATE INDEX feeds_newest ON feeds (is_active, id);

-- The paid → free expiry job looks only at entries that can still expire.
CREATE INDEX entries_expiring ON entries (expires_at) WHERE is_free = 0 AND expires_at IS NOT NULL;
