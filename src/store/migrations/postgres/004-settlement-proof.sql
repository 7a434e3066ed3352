-- A payment leaves 'pending' only when the chain decides. To decide without scanning history, remember where to
-- look: the chain head when settlement was asked for, and our own settling transaction (known before it is sent).
ALTER TABLE payments ADD COLUMN submitted_block bigint;
ALTER TABLE payments ADD COLUMN submitted_hash text COLLATE "C";
ALTER TABLE payments ADD COLUMN settled_block bigint;

-- Small facts the server keeps between runs (e.g. how far the ledger has been checked against the chain).
CREATE TABLE meta (
  key text COLLATE "C" PRIMARY KEY,
  value text COLLATE "C" NOT NULL
);
