-- Browser sessions ended by sign-out before their token's expiry (store/ended-sessions.ts); purged after it.
CREATE TABLE ended_sessions (
  id text COLLATE "C" PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX ended_sessions_expiry ON ended_sessions (expires_at);
