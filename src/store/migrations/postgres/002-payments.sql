-- A payment (the x402 payment intent; its id is a transaction's piid) is written as pending BEFORE settlement and
-- completed after, so a crash in between is reconciled from the chain at the next start.
CREATE TABLE payments (
  id text COLLATE "C" PRIMARY KEY,
  payer_lc text COLLATE "C" NOT NULL,
  nonce text COLLATE "C" NOT NULL,      -- EIP-3009 authorization nonce (0x + 64 hex, lower case)
  entry_id text COLLATE "C" NOT NULL REFERENCES entries (id),
  pay_to text COLLATE "C" NOT NULL,
  amount numeric(78,0) NOT NULL,
  x402_version bigint NOT NULL,
  payload text COLLATE "C" NOT NULL,    -- the payment payload as received (JSON), for reconciliation
  requirements text COLLATE "C" NOT NULL, -- the requirements we built (JSON)
  valid_before bigint NOT NULL,
  status text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  error text COLLATE "C",
  transaction_hash text COLLATE "C",
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (payer_lc, nonce)
);
CREATE INDEX payments_pending ON payments (status) WHERE status = 'pending';

CREATE TABLE transactions (
  id text COLLATE "C" PRIMARY KEY,
  piid text COLLATE "C" REFERENCES payments (id),
  payer text COLLATE "C" NOT NULL,
  payer_lc text COLLATE "C" NOT NULL,
  pay_to text COLLATE "C" NOT NULL,
  pay_to_lc text COLLATE "C" NOT NULL,
  amount numeric(78,0) NOT NULL,
  asset text COLLATE "C" NOT NULL,
  entry_id text COLLATE "C" REFERENCES entries (id),
  transaction_hash text COLLATE "C" NOT NULL UNIQUE,
  created_at bigint NOT NULL
);
CREATE INDEX transactions_payer ON transactions (payer_lc, id);
CREATE INDEX transactions_pay_to ON transactions (pay_to_lc, id);
CREATE INDEX transactions_entry ON transactions (entry_id, id);

-- Who may read a paid entry without paying again.
CREATE TABLE purchases (
  wallet_id text COLLATE "C" NOT NULL REFERENCES wallets (id),
  entry_id text COLLATE "C" NOT NULL REFERENCES entries (id),
  transaction_id text COLLATE "C" NOT NULL REFERENCES transactions (id),
  created_at bigint NOT NULL,
  PRIMARY KEY (wallet_id, entry_id)
);
CREATE INDEX purchases_entry ON purchases (entry_id);
