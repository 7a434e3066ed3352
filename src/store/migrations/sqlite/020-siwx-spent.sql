-- Sign-in-with-x nonces spent (issue 37): a proof is good once. Its nonces are minted without a row (a MAC under the
-- server key), so only their spending is kept, until they expire (the nonce purge removes them).
CREATE TABLE siwx_spent (
  nonce TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
CREATE INDEX siwx_spent_expiry ON siwx_spent (expires_at);
