-- Indexes for the hot reads of a large market.

-- Tag filters: one row per feed and tag (lower case), kept in step with feeds.tags by triggers.
CREATE TABLE feed_tags (
  tag_lc TEXT NOT NULL,
  feed_id TEXT NOT NULL,
  PRIMARY KEY (tag_lc, feed_id)
) WITHOUT ROWID;
CREATE INDEX feed_tags_feed ON feed_tags (feed_id);

CREATE TRIGGER feeds_tags_insert AFTER INSERT ON feeds BEGIN
  INSERT OR IGNORE INTO feed_tags (tag_lc, feed_id) SELECT lower(value), NEW.id FROM json_each(NEW.tags);
END;
CREATE TRIGGER feeds_tags_update AFTER UPDATE OF tags ON feeds BEGIN
  DELETE FROM feed_tags WHERE feed_id = NEW.id;
  INSERT OR IGNORE INTO feed_tags (tag_lc, feed_id) SELECT lower(value), NEW.id FROM json_each(NEW.tags);
END;
INSERT OR IGNORE INTO feed_tags (tag_lc, feed_id) SELECT lower(j.value), f.id FROM feeds f, json_each(f.tags) j;

-- Listings by category or owner, newest first.
CREATE INDEX feeds_category_newest ON feeds (category_id, id);
CREATE INDEX feeds_newest ON feeds (is_active, id);

-- The paid → free expiry job looks only at entries that can still expire.
CREATE INDEX entries_expiring ON entries (expires_at) WHERE is_free = 0 AND expires_at IS NOT NULL;
