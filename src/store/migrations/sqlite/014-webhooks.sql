-- Sale webhooks (domain/webhooks.ts). An endpoint is a creator's HTTPS URL; its secret signs every delivery
-- (Standard Webhooks) and is shown once, when it is registered.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  url TEXT NOT NULL,
  description TEXT,
  events TEXT NOT NULL,                 -- JSON array of the events it receives
  secret TEXT NOT NULL,                 -- whsec_<base64 of 32 random bytes>
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_wallet ON webhook_endpoints (wallet_id, is_active);

-- The outbox: one row per event and endpoint, written by the triggers below in the transaction that records the
-- event (a ledger row; a paid entry's early access ending), so no crash falls between the two. Its id (the event's
-- subject and the endpoint) is the webhook-id of every attempt: one event is one delivery, however often retried.
-- next_attempt_at is also a sender's claim: a delivery being sent is due again only if its sender died.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  event TEXT NOT NULL,                  -- sale.recorded | entry.expired
  subject_id TEXT NOT NULL,             -- the ledger row, or the entry
  payload TEXT,                         -- the body, fixed at the first attempt: every attempt signs the same bytes
  status TEXT NOT NULL,                 -- pending | delivered | failed (24 h of retries) | cancelled (endpoint removed)
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_status INTEGER,                  -- the HTTP status of the last attempt; null when none came
  last_error TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at, id);

CREATE TRIGGER transactions_webhooks AFTER INSERT ON transactions BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'sale_' || NEW.id || '_' || h.id, h.id, 'sale.recorded', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE e.id = NEW.entry_id AND h.is_active = 1 AND h.events LIKE '%"sale.recorded"%';
END;

-- The expiry job frees a paid entry whose expires_at has passed (store/entries.ts freeExpired); an owner making one
-- free clears expires_at, and is no expiry.
CREATE TRIGGER entries_expired_webhooks AFTER UPDATE OF is_free ON entries
  WHEN OLD.is_free = 0 AND NEW.is_free = 1 AND NEW.expires_at IS NOT NULL AND NEW.expires_at <= NEW.updated_at BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'expiry_' || NEW.id || '_' || NEW.expires_at || '_' || h.id, h.id, 'entry.expired', NEW.id, 'pending', NEW.updated_at, NEW.updated_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"entry.expired"%';
END;
