-- WebSub (issue 38, domain/websub.ts): Trellis is the hub of its own public feeds. A request to (un)subscribe waits
-- in websub_intents until the callback has echoed its challenge (verification of intent); a verified subscription
-- lives in websub_subscriptions until its lease ends. An entry published (or made free) writes one delivery per
-- subscription of its feed, in the transaction that writes the entry (the triggers below), so no publication is
-- lost to a crash; the leader's job POSTs the feed to the callback and removes the row once answered 2xx.
CREATE TABLE websub_subscriptions (
  id TEXT PRIMARY KEY,
  feed_id TEXT NOT NULL,
  format TEXT NOT NULL,                 -- feed.xml | feed.atom | feed.json: the topic is the feed in that format
  callback TEXT NOT NULL,
  callback_host TEXT NOT NULL,          -- the callback's host, for the per-host caps
  secret TEXT,                          -- hub.secret: signs each distribution (X-Hub-Signature), when given
  lease_seconds INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,          -- the lease's end: removed then, unless renewed
  failures INTEGER NOT NULL DEFAULT 0,  -- distributions without a 2xx in a row (0: in good standing)
  resting_until INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX websub_subscriptions_topic ON websub_subscriptions (feed_id, format, callback);
CREATE INDEX websub_subscriptions_host ON websub_subscriptions (callback_host);
CREATE INDEX websub_subscriptions_expiry ON websub_subscriptions (expires_at);

-- The newest request for one topic and callback replaces the one before it (and takes a new id, so a verification
-- of the old one in flight does not settle the new one). next_attempt_at is also a verifier's claim.
CREATE TABLE websub_intents (
  id TEXT PRIMARY KEY,
  mode TEXT NOT NULL,                   -- subscribe | unsubscribe
  feed_id TEXT NOT NULL,
  format TEXT NOT NULL,
  callback TEXT NOT NULL,
  callback_host TEXT NOT NULL,
  secret TEXT,
  lease_seconds INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX websub_intents_topic ON websub_intents (feed_id, format, callback);
CREATE INDEX websub_intents_host ON websub_intents (callback_host);
CREATE INDEX websub_intents_due ON websub_intents (next_attempt_at);

-- The outbox of content distribution: pending rows only (a row answered 2xx, given up, or of a subscription gone is
-- removed). next_attempt_at is also a sender's claim.
CREATE TABLE websub_deliveries (
  id TEXT PRIMARY KEY,
  subscription_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX websub_deliveries_due ON websub_deliveries (next_attempt_at);
CREATE INDEX websub_deliveries_subscription ON websub_deliveries (subscription_id, created_at);

CREATE TRIGGER entries_published_websub AFTER INSERT ON entries WHEN NEW.is_active = 1 BEGIN
  INSERT OR IGNORE INTO websub_deliveries (id, subscription_id, entry_id, next_attempt_at, created_at)
    SELECT 'new_' || NEW.id || '_' || s.id, s.id, NEW.id, NEW.created_at, NEW.created_at
    FROM websub_subscriptions s WHERE s.feed_id = NEW.feed_id AND s.expires_at > NEW.created_at;
END;

-- A paid entry made free (by its owner, or its early access ending) changes what the feed says of it.
CREATE TRIGGER entries_freed_websub AFTER UPDATE OF is_free ON entries
  WHEN OLD.is_free = 0 AND NEW.is_free = 1 AND NEW.is_active = 1 BEGIN
  INSERT OR IGNORE INTO websub_deliveries (id, subscription_id, entry_id, next_attempt_at, created_at)
    SELECT 'free_' || NEW.id || '_' || NEW.updated_at || '_' || s.id, s.id, NEW.id, NEW.updated_at, NEW.updated_at
    FROM websub_subscriptions s WHERE s.feed_id = NEW.feed_id AND s.expires_at > NEW.updated_at;
END;

-- The entry.published webhook (domain/webhook-payloads.ts), for the endpoints of the feed's owner that chose it.
CREATE TRIGGER entries_published_webhooks AFTER INSERT ON entries WHEN NEW.is_active = 1 BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'published_' || NEW.id || '_' || h.id, h.id, 'entry.published', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"entry.published"%';
END;
