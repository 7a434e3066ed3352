-- A payment is one authorization on one chain, and a sale one transaction on one chain (see the SQLite step of the
-- same number): the unique keys take the network in. The hash keeps an index of its own for lookups without a network.
ALTER TABLE payments ADD CONSTRAINT payments_network_payer_lc_nonce_key UNIQUE (network, payer_lc, nonce);
ALTER TABLE payments DROP CONSTRAINT payments_payer_lc_nonce_key;
ALTER TABLE transactions ADD CONSTRAINT transactions_network_transaction_hash_key UNIQUE (network, transaction_hash);
ALTER TABLE transactions DROP CONSTRAINT transactions_transaction_hash_key;
CREATE INDEX transactions_hash ON transactions (transaction_hash);
