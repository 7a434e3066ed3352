-- WebSub and the entry.published webhook (see the SQLite step of the same number for the model). No read of these
-- tables is kept in the read memo: they have no trellis_changed() trigger (011), as the webhook tables have none.
CREATE TABLE websub_subscriptions (
  id text COLLATE "C" PRIMARY KEY,
  feed_id text COLLATE "C" NOT NULL,
  format text COLLATE "C" NOT NULL,
  callback text COLLATE "C" NOT NULL,
  callback_host text COLLATE "C" NOT NULL,
  secret text COLLATE "C",
  lease_seconds bigint NOT NULL,
  expires_at bigint NOT NULL,
  failures bigint NOT NULL DEFAULT 0,
  resting_until bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE UNIQUE INDEX websub_subscriptions_topic ON websub_subscriptions (feed_id, format, callback);
CREATE INDEX websub_subscriptions_host ON websub_subscriptions (callback_host);
CREATE INDEX websub_subscriptions_expiry ON websub_subscriptions (expires_at);

CREATE TABLE websub_intents (
  id text COLLATE "C" PRIMARY KEY,
  mode text COLLATE "C" NOT NULL,
  feed_id text COLLATE "C" NOT NULL,
  format text COLLATE "C" NOT NULL,
  callback text COLLATE "C" NOT NULL,
  callback_host text COLLATE "C" NOT NULL,
  secret text COLLATE "C",
  lease_seconds bigint NOT NULL,
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  created_at bigint NOT NULL
);
CREATE UNIQUE INDEX websub_intents_topic ON websub_intents (feed_id, format, callback);
CREATE INDEX websub_intents_host ON websub_intents (callback_host);
CREATE INDEX websub_intents_due ON websub_intents (next_attempt_at);

CREATE TABLE websub_deliveries (
  id text COLLATE "C" PRIMARY KEY,
  subscription_id text COLLATE "C" NOT NULL,
  entry_id text COLLATE "C" NOT NULL,
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  last_error text COLLATE "C",
  created_at bigint NOT NULL
);
CREATE INDEX websub_deliveries_due ON websub_deliveries (next_attempt_at);
CREATE INDEX websub_deliveries_subscription ON websub_deliveries (subscription_id, created_at);

CREATE FUNCTION entries_published_websub() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO websub_deliveries (id, subscription_id, entry_id, next_attempt_at, created_at)
    SELECT 'new_' || NEW.id || '_' || s.id, s.id, NEW.id, NEW.created_at, NEW.created_at
    FROM websub_subscriptions s WHERE s.feed_id = NEW.feed_id AND s.expires_at > NEW.created_at
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER entries_published_websub AFTER INSERT ON entries FOR EACH ROW WHEN (NEW.is_active = 1)
  EXECUTE FUNCTION entries_published_websub();

CREATE FUNCTION entries_freed_websub() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO websub_deliveries (id, subscription_id, entry_id, next_attempt_at, created_at)
    SELECT 'free_' || NEW.id || '_' || NEW.updated_at || '_' || s.id, s.id, NEW.id, NEW.updated_at, NEW.updated_at
    FROM websub_subscriptions s WHERE s.feed_id = NEW.feed_id AND s.expires_at > NEW.updated_at
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER entries_freed_websub AFTER UPDATE OF is_free ON entries FOR EACH ROW
  WHEN (OLD.is_free = 0 AND NEW.is_free = 1 AND NEW.is_active = 1)
  EXECUTE FUNCTION entries_freed_websub();

CREATE FUNCTION entries_published_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'published_' || NEW.id || '_' || h.id, h.id, 'entry.published', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"entry.published"%'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER entries_published_webhooks AFTER INSERT ON entries FOR EACH ROW WHEN (NEW.is_active = 1)
  EXECUTE FUNCTION entries_published_webhooks();
