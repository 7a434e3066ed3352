-- A payment (the x402 payment intent; its id is a transaction's piid) is written as pending BEFORE settlement and
-- completed after, so a crash in between is reconciled from the chain at the next start.
CREATE TABLE payments (
  id TEXT PRIMARY KEY,
  payer_lc TEXT NOT NULL,
  nonce TEXT NOT NULL,                  -- EIP-3009 authorization nonce (0x + 64 hex, lower case)
  entry_id TEXT NOT NULL REFERENCES entries (id),
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
  UNIQUE (payer_lc, nonce)
);
CREATE INDEX payments_pending ON payments (status) WHERE status = 'pending';

CREATE TABLE transactions (
  id TEXT PRIMARY KEY,
  piid TEXT REFERENCES payments (id),
  payer TEXT NOT NULL,
  payer_lc TEXT NOT NULL,
  pay_to TEXT NOT NULL,
  pay_to_lc TEXT NOT NULL,
  amount INTEGER NOT NULL,
  asset TEXT NOT NULL,
  entry_id TEXT REFERENCES entries (id),
  transaction_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX transactions_payer ON transactions (payer_lc, id);
CREATE INDEX transactions_pay_to ON transactions (pay_to_lc, id);
CREATE INDEX transactions_entry ON transactions (entry_id, id);

-- Who may read a paid entry without paying again.
CREATE TABLE purchases (
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  entry_id TEXT NOT NULL REFERENCES entries (id),
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (wallet_id, entry_id)
);
CREATE INDEX purchases_entry ON purchases (entry_id);
