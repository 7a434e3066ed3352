-- The embedded engine's 001 for PostgreSQL. Money columns are NUMERIC(78,0): exact, and wide enough for any uint256
-- amount; they are read back as text. Times, counts and sizes are bigint; flags are smallint 0/1, so the statements
-- the stores share with SQLite compare them with 0 and 1 alike.
--
-- Every text column collates "C", in this step and every later one: it compares, orders, groups and keys by bytes, as
-- SQLite's BINARY does, whatever the database's default collation (often en_US.UTF-8, or an ICU locale, where 'B' <
-- 'a' is false and lower() folds more than ASCII). A cursor `WHERE (name_lc, id) > (…)` and its ORDER BY then page as
-- on the embedded engine, and a unique index refuses exactly what SQLite's does.
CREATE TABLE wallets (
  id text COLLATE "C" PRIMARY KEY,
  address text COLLATE "C" NOT NULL,     -- EIP-55 checksum form
  address_lc text COLLATE "C" NOT NULL UNIQUE, -- lookups are case-insensitive
  network text COLLATE "C" NOT NULL,
  username text COLLATE "C",
  username_lc text COLLATE "C" UNIQUE,
  picture_url text COLLATE "C",
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE UNLOGGED TABLE nonces (
  nonce text COLLATE "C" PRIMARY KEY,
  address_lc text COLLATE "C" NOT NULL,
  message text COLLATE "C" NOT NULL,
  expires_at bigint NOT NULL,
  used_at bigint
);
CREATE INDEX nonces_expiry ON nonces (expires_at);

CREATE TABLE categories (
  id text COLLATE "C" PRIMARY KEY,
  name text COLLATE "C" NOT NULL,
  name_lc text COLLATE "C" NOT NULL UNIQUE,
  description text COLLATE "C",
  icon_url text COLLATE "C",
  is_active smallint NOT NULL DEFAULT 1,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE feeds (
  id text COLLATE "C" PRIMARY KEY,
  owner_id text COLLATE "C" NOT NULL REFERENCES wallets (id),
  category_id text COLLATE "C" REFERENCES categories (id),
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C",
  image_cid text COLLATE "C",
  tags text COLLATE "C" NOT NULL DEFAULT '[]', -- JSON array, order kept
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
  id text COLLATE "C" PRIMARY KEY,
  feed_id text COLLATE "C" NOT NULL REFERENCES feeds (id),
  cid text COLLATE "C" NOT NULL,
  size bigint NOT NULL,
  mime_type text COLLATE "C" NOT NULL,
  title text COLLATE "C",
  description text COLLATE "C",
  metadata text COLLATE "C",
  tags text COLLATE "C" NOT NULL DEFAULT '[]',
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
