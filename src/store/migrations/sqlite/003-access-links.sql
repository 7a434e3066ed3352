CREATE TABLE access_links (
  id TEXT PRIMARY KEY,
  entry_id TEXT NOT NULL REFERENCES entries (id),
  feed_id TEXT NOT NULL REFERENCES feeds (id),
  created_by TEXT NOT NULL,              -- address (lower case) of the owner who made it
  expires_at INTEGER NOT NULL,
  max_uses INTEGER,                      -- NULL: unlimited
  current_uses INTEGER NOT NULL DEFAULT 0,
  description TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  last_used_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX access_links_entry ON access_links (entry_id, id);

-- recent-entries: newest active entries platform-wide.
CREATE INDEX entries_recent ON entries (is_active, id);
