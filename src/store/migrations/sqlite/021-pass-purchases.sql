-- trellis: rebuilds tables
-- Passes are bought as entries are (issue 37), by the same payments: a payment sells an entry (entry_id) or a
-- feed's pass (pass_feed_id, with the duration it was offered at), never both; one pending payment per purchase of
-- either. SQLite cannot drop entry_id's NOT NULL in place: the table is made again, every row and index kept (the
-- runner turns foreign keys off around this step and checks them all before it commits: SQLite's own procedure).
CREATE TABLE payments_rebuilt (
  id TEXT PRIMARY KEY,
  payer_lc TEXT NOT NULL,
  nonce TEXT NOT NULL,                  -- EIP-3009 authorization nonce (0x + 64 hex, lower case)
  entry_id TEXT REFERENCES entries (id),
  pay_to TEXT NOT NULL,
  amount INTEGER NOT NULL,
  x402_version INTEGER NOT NULL,
  payload TEXT NOT NULL,                -- the payment payload as received (JSON), for reconciliation
  requirements TEXT NOT NULL,           -- the requirements we built (JSON)
  valid_before INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  error TEXT,
  transaction_hash TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  submitted_block INTEGER,
  submitted_hash TEXT,
  settled_block INTEGER,
  pending_slot INTEGER NOT NULL DEFAULT 0,
  settler TEXT,
  pass_feed_id TEXT REFERENCES feeds (id),
  pass_duration_s INTEGER,
  UNIQUE (payer_lc, nonce),
  CHECK ((entry_id IS NULL) != (pass_feed_id IS NULL)),
  CHECK ((pass_feed_id IS NULL) = (pass_duration_s IS NULL))
);
INSERT INTO payments_rebuilt (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before,
  status, error, transaction_hash, created_at, updated_at, submitted_block, submitted_hash, settled_block, pending_slot, settler)
  SELECT id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before, status, error,
    transaction_hash, created_at, updated_at, submitted_block, submitted_hash, settled_block, pending_slot, settler FROM payments;
DROP TABLE payments;
ALTER TABLE payments_rebuilt RENAME TO payments;
CREATE INDEX payments_pending ON payments (status) WHERE status = 'pending';
CREATE UNIQUE INDEX payments_one_pending_purchase ON payments (payer_lc, entry_id, pending_slot) WHERE status = 'pending';
CREATE UNIQUE INDEX payments_one_pending_pass ON payments (payer_lc, pass_feed_id) WHERE status = 'pending' AND pass_feed_id IS NOT NULL;

-- The passes held: one row per pass sold, running from starts_at (the sale, or the end of the buyer's pass running
-- then: buying again extends it) to expires_at. A holder reads every paid entry of the feed while one runs.
CREATE TABLE passes (
  id TEXT PRIMARY KEY,
  feed_id TEXT NOT NULL REFERENCES feeds (id),
  holder_lc TEXT NOT NULL,
  starts_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  transaction_id TEXT NOT NULL UNIQUE REFERENCES transactions (id),
  created_at INTEGER NOT NULL
);
CREATE INDEX passes_holder ON passes (holder_lc, id);
CREATE INDEX passes_feed_holder ON passes (feed_id, holder_lc, expires_at);
