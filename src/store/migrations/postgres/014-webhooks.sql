-- Sale webhooks (see the SQLite step of the same number for the model).
CREATE TABLE webhook_endpoints (
  id text COLLATE "C" PRIMARY KEY,
  wallet_id text COLLATE "C" NOT NULL REFERENCES wallets (id),
  url text COLLATE "C" NOT NULL,
  description text COLLATE "C",
  events text COLLATE "C" NOT NULL,
  secret text COLLATE "C" NOT NULL,
  is_active smallint NOT NULL DEFAULT 1,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX webhook_endpoints_wallet ON webhook_endpoints (wallet_id, is_active);

CREATE TABLE webhook_deliveries (
  id text COLLATE "C" PRIMARY KEY,
  endpoint_id text COLLATE "C" NOT NULL,
  event text COLLATE "C" NOT NULL,
  subject_id text COLLATE "C" NOT NULL,
  payload text COLLATE "C",
  status text COLLATE "C" NOT NULL,
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  last_status bigint,
  last_error text COLLATE "C",
  created_at bigint NOT NULL,
  finished_at bigint
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at, id);

CREATE FUNCTION transactions_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'sale_' || NEW.id || '_' || h.id, h.id, 'sale.recorded', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE e.id = NEW.entry_id AND h.is_active = 1 AND h.events LIKE '%"sale.recorded"%'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER transactions_webhooks AFTER INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION transactions_webhooks();

CREATE FUNCTION entries_expired_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'expiry_' || NEW.id || '_' || NEW.expires_at || '_' || h.id, h.id, 'entry.expired', NEW.id, 'pending', NEW.updated_at, NEW.updated_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"entry.expired"%'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER entries_expired_webhooks AFTER UPDATE OF is_free ON entries FOR EACH ROW
  WHEN (OLD.is_free = 0 AND NEW.is_free = 1 AND NEW.expires_at IS NOT NULL AND NEW.expires_at <= NEW.updated_at)
  EXECUTE FUNCTION entries_expired_webhooks();
