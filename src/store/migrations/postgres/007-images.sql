-- Cover images: the stored CIDs that are images, and their type. A feed's image_cid may name only these, so the
-- content of an entry (a paid one included) can never be served as someone's cover.
CREATE TABLE images (
  cid text COLLATE "C" PRIMARY KEY,
  mime_type text COLLATE "C" NOT NULL,
  size bigint NOT NULL,
  created_at bigint NOT NULL
);

-- A cover set before this table existed is served only if no entry has its CID (checked once, then recorded).
CREATE INDEX entries_cid ON entries (cid);
