CREATE TABLE access_links (
  id text COLLATE "C" PRIMARY KEY,
  entry_id text COLLATE "C" NOT NULL REFERENCES entries (id),
  feed_id text COLLATE "C" NOT NULL REFERENCES feeds (id),
  created_by text COLLATE "C" NOT NULL,  -- address (lower case) of the owner who made it
  expires_at bigint NOT NULL,
  max_uses bigint,                       -- NULL: unlimited
  current_uses bigint NOT NULL DEFAULT 0,
  description text COLLATE "C",
  is_active smallint NOT NULL DEFAULT 1,
  last_used_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX access_links_entry ON access_links (entry_id, id);

-- recent-entries: newest active entries platform-wide.
CREATE INDEX entries_recent ON entries (is_active, id);
