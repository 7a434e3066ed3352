-- A payment (the x402 payment intent; its id is a transaction's piid) is written as pending BEFORE settlement and
-- completed after, so a crash in between is reconciled from the chain at the next start.
CREATE TABLE payments (
  id text PRIMARY KEY,
  payer_lc text NOT NULL,
  nonce text NOT NULL,                  -- EIP-3009 authorization nonce (0x + 64 hex, lower case)
  entry_id text NOT NULL REFERENCES entries (id),
  pay_to text NOT NULL,
  amount numeric(78,0) NOT NULL,
  x402_version bigint NOT NULL,
  payload text NOT NULL,                -- the payment payload as received (JSON), for reconciliation
  requirements text NOT NULL,           -- the requirements we built (JSON)
  valid_before bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  error text,
  transaction_hash text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (payer_lc, nonce)
);
CREATE INDEX payments_pending ON payments (status) WHERE status = 'pending';

CREATE TABLE transactions (
  id text PRIMARY KEY,
  piid text REFERENCES payments (id),
  payer text NOT NULL,
  payer_lc text NOT NULL,
  pay_to text NOT NULL,
  pay_to_lc text NOT NULL,
  amount numeric(78,0) NOT NULL,
  asset text NOT NULL,
  entry_id text REFERENCES entries (id),
  transaction_hash text NOT NULL UNIQUE,
  created_at bigint NOT NULL
);
CREATE INDEX transactions_payer ON transactions (payer_lc, id);
CREATE INDEX transactions_pay_to ON transactions (pay_to_lc, id);
CREATE INDEX transactions_entry ON transactions (entry_id, id);

-- Who may read a paid entry without paying again.
CREATE TABLE purchases (
  wallet_id text NOT NULL REFERENCES wallets (id),
  entry_id text NOT NULL REFERENCES entries (id),
  transaction_id text NOT NULL REFERENCES transactions (id),
  created_at bigint NOT NULL,
  PRIMARY KEY (wallet_id, entry_id)
);
CREATE INDEX purchases_entry ON purchases (entry_id);
