-- A payment leaves 'pending' only when the chain decides. To decide without scanning history, remember where to
-- look: the chain head when settlement was asked for, and our own settling transaction (known before it is sent).
ALTER TABLE payments ADD COLUMN submitted_block INTEGER;
ALTER TABLE payments ADD COLUMN submitted_hash TEXT;
ALTER TABLE payments ADD COLUMN settled_block INTEGER;

-- Small facts the server keeps between runs (e.g. how far the ledger has been checked against the chain).
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
