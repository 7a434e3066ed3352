-- trellis: rebuilds tables
-- A payment is one authorization on one chain, and a sale one transaction on one chain (issue 40: a server sells on
-- several networks): the same payer's nonce, or the same transaction hash, on two chains are two. The unique keys take
-- the network in. SQLite cannot change a table's UNIQUE constraint in place: both tables are made again, every row,
-- index and trigger kept (the runner turns foreign keys off around this step and checks them all before it commits).
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
  network TEXT,
  UNIQUE (network, payer_lc, nonce),
  CHECK ((entry_id IS NULL) != (pass_feed_id IS NULL)),
  CHECK ((pass_feed_id IS NULL) = (pass_duration_s IS NULL))
);
INSERT INTO payments_rebuilt SELECT id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements,
  valid_before, status, error, transaction_hash, created_at, updated_at, submitted_block, submitted_hash, settled_block,
  pending_slot, settler, pass_feed_id, pass_duration_s, network FROM payments;
DROP TABLE payments;
ALTER TABLE payments_rebuilt RENAME TO payments;
CREATE INDEX payments_pending ON payments (status) WHERE status = 'pending';
CREATE UNIQUE INDEX payments_one_pending_purchase ON payments (payer_lc, entry_id, pending_slot) WHERE status = 'pending';
CREATE UNIQUE INDEX payments_one_pending_pass ON payments (payer_lc, pass_feed_id) WHERE status = 'pending' AND pass_feed_id IS NOT NULL;

CREATE TABLE transactions_rebuilt (
  id TEXT PRIMARY KEY,
  piid TEXT REFERENCES payments (id),
  payer TEXT NOT NULL,
  payer_lc TEXT NOT NULL,
  pay_to TEXT NOT NULL,
  pay_to_lc TEXT NOT NULL,
  amount INTEGER NOT NULL,
  asset TEXT NOT NULL,
  entry_id TEXT REFERENCES entries (id),
  transaction_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'entry' CHECK (kind IN ('entry', 'pass')),
  feed_id TEXT REFERENCES feeds (id),
  network TEXT,
  UNIQUE (network, transaction_hash)
);
INSERT INTO transactions_rebuilt SELECT id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id,
  transaction_hash, created_at, kind, feed_id, network FROM transactions;
DROP TABLE transactions;
ALTER TABLE transactions_rebuilt RENAME TO transactions;
CREATE INDEX transactions_payer ON transactions (payer_lc, id);
CREATE INDEX transactions_pay_to ON transactions (pay_to_lc, id);
CREATE INDEX transactions_entry ON transactions (entry_id, id);
CREATE INDEX transactions_time ON transactions (created_at);
CREATE INDEX transactions_feed ON transactions (feed_id, id);
CREATE INDEX transactions_network ON transactions (network, id);
-- A hash's lookups without its network (a ledger row found by its transaction) keep an index of their own.
CREATE INDEX transactions_hash ON transactions (transaction_hash);
-- The triggers as 014, 026 and 010/019 left them (dropped with the table).
CREATE TRIGGER transactions_webhooks AFTER INSERT ON transactions BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'sale_' || NEW.id || '_' || h.id, h.id, 'sale.recorded', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE e.id = NEW.entry_id AND h.is_active = 1 AND h.events LIKE '%"sale.recorded"%';
END;
CREATE TRIGGER transactions_tally AFTER INSERT ON transactions BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc) VALUES (NEW.pay_to_lc), (NEW.payer_lc);
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at),
    sold = sold + (address_lc = NEW.pay_to_lc),
    revenue = revenue + CASE WHEN address_lc = NEW.pay_to_lc THEN NEW.amount ELSE 0 END,
    bought = bought + (address_lc = NEW.payer_lc),
    spent = spent + CASE WHEN address_lc = NEW.payer_lc THEN NEW.amount ELSE 0 END
  WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc);
  INSERT OR IGNORE INTO address_days (address_lc, day) VALUES (NEW.pay_to_lc, NEW.created_at / 86400), (NEW.payer_lc, NEW.created_at / 86400);
  INSERT OR IGNORE INTO address_pairs (pay_to_lc, payer_lc) VALUES (NEW.pay_to_lc, NEW.payer_lc);
  INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
    SELECT NEW.feed_id, NEW.payer_lc, NEW.created_at WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT NEW.feed_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = purchases + 1, spent = spent + excluded.spent;
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
END;
CREATE TRIGGER transactions_analytics AFTER INSERT ON transactions BEGIN
  INSERT INTO seller_buyer_days (pay_to_lc, day, payer_lc, purchases, revenue, passes)
    VALUES (NEW.pay_to_lc, NEW.created_at / 86400, NEW.payer_lc, 1, NEW.amount, NEW.kind = 'pass')
    ON CONFLICT (pay_to_lc, day, payer_lc) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue,
      passes = passes + excluded.passes;
  INSERT INTO entry_days (entry_id, day, purchases, revenue)
    SELECT NEW.entry_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
END;
