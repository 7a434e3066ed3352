-- Sign-in-with-x nonces spent (issue 37): a proof is good once, across instances. Its nonces are minted without a row
-- (a MAC under the server key), so only their spending is kept, until they expire (the nonce purge removes them).
-- Logged, unlike nonces: emptied by a crash, it would let a spent proof be used again within its five minutes.
CREATE TABLE siwx_spent (
  nonce text COLLATE "C" PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX siwx_spent_expiry ON siwx_spent (expires_at);
