-- The embedded engine's 001 for PostgreSQL. Money columns are NUMERIC(78,0): exact, and wide enough for any uint256
-- amount; they are read back as text. Times, counts and sizes are bigint; flags are smallint 0/1, so the statements
-- the stores share with SQLite compare them with 0 and 1 alike.
CREATE TABLE wallets (
  id text PRIMARY KEY,
  address text NOT NULL,                 -- EIP-55 checksum form
  address_lc text NOT NULL UNIQUE,       -- lookups are case-insensitive
  network text NOT NULL,
  username text,
  username_lc text UNIQUE,
  picture_url text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE nonces (
  nonce text PRIMARY KEY,
  address_lc text NOT NULL,
  message text NOT NULL,
  expires_at bigint NOT NULL,
  used_at bigint
);
CREATE INDEX nonces_expiry ON nonces (expires_at);

CREATE TABLE categories (
  id text PRIMARY KEY,
  name text NOT NULL,
  name_lc text NOT NULL UNIQUE,
  description text,
  icon_url text,
  is_active smallint NOT NULL DEFAULT 1,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE feeds (
  id text PRIMARY KEY,
  owner_id text NOT NULL REFERENCES wallets (id),
  category_id text REFERENCES categories (id),
  name text NOT NULL,
  description text,
  image_cid text,
  tags text NOT NULL DEFAULT '[]',       -- JSON array, order kept
  is_active smallint NOT NULL DEFAULT 1,
  total_entries bigint NOT NULL DEFAULT 0,   -- active entries only
  total_purchases bigint NOT NULL DEFAULT 0,
  total_revenue numeric(78,0) NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX feeds_owner ON feeds (owner_id, is_active);
CREATE INDEX feeds_category ON feeds (category_id);

CREATE TABLE entries (
  id text PRIMARY KEY,
  feed_id text NOT NULL REFERENCES feeds (id),
  cid text NOT NULL,
  size bigint NOT NULL,
  mime_type text NOT NULL,
  title text,
  description text,
  metadata text,
  tags text NOT NULL DEFAULT '[]',
  is_free smallint NOT NULL DEFAULT 1,
  price numeric(78,0) NOT NULL DEFAULT 0,
  expires_at bigint,
  is_active smallint NOT NULL DEFAULT 1,
  deactivated_with_feed smallint NOT NULL DEFAULT 0, -- so reactivating a deleted feed restores exactly these
  total_purchases bigint NOT NULL DEFAULT 0,
  total_revenue numeric(78,0) NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX entries_feed ON entries (feed_id, is_active, id);
