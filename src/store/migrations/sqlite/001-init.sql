-- Money columns are INTEGER smallest units (64-bit, exact); they are read back as TEXT so no float ever touches them.
CREATE TABLE wallets (
  id TEXT PRIMARY KEY,
  address TEXT NOT NULL,                 -- EIP-55 checksum form
  address_lc TEXT NOT NULL UNIQUE,       -- lookups are case-insensitive
  network TEXT NOT NULL,
  username TEXT,
  username_lc TEXT UNIQUE,
  picture_url TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE nonces (
  nonce TEXT PRIMARY KEY,
  address_lc TEXT NOT NULL,
  message TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX nonces_expiry ON nonces (expires_at);

CREATE TABLE categories (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  name_lc TEXT NOT NULL UNIQUE,
  description TEXT,
  icon_url TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE feeds (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL REFERENCES wallets (id),
  category_id TEXT REFERENCES categories (id),
  name TEXT NOT NULL,
  description TEXT,
  image_cid TEXT,
  tags TEXT NOT NULL DEFAULT '[]',       -- JSON array, order kept
  is_active INTEGER NOT NULL DEFAULT 1,
  total_entries INTEGER NOT NULL DEFAULT 0,   -- active entries only
  total_purchases INTEGER NOT NULL DEFAULT 0,
  total_revenue INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX feeds_owner ON feeds (owner_id, is_active);
CREATE INDEX feeds_category ON feeds (category_id);

CREATE TABLE entries (
  id TEXT PRIMARY KEY,
  feed_id TEXT NOT NULL REFERENCES feeds (id),
  cid TEXT NOT NULL,
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  title TEXT,
  description TEXT,
  metadata TEXT,
  tags TEXT NOT NULL DEFAULT '[]',
  is_free INTEGER NOT NULL DEFAULT 1,
  price INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER,
  is_active INTEGER NOT NULL DEFAULT 1,
  deactivated_with_feed INTEGER NOT NULL DEFAULT 0, -- so reactivating a deleted feed restores exactly these
  total_purchases INTEGER NOT NULL DEFAULT 0,
  total_revenue INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX entries_feed ON entries (feed_id, is_active, id);
