-- Pass webhooks (see the SQLite step of the same number for the model).
ALTER TABLE passes ADD COLUMN ended_at bigint;
CREATE INDEX passes_ending ON passes (expires_at) WHERE ended_at IS NULL;

CREATE FUNCTION passes_sold_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'pass_' || NEW.id || '_' || h.id, h.id, 'pass.sold', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"pass.sold"%'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER passes_sold_webhooks AFTER INSERT ON passes FOR EACH ROW EXECUTE FUNCTION passes_sold_webhooks();

CREATE FUNCTION passes_expired_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM passes p WHERE p.feed_id = NEW.feed_id AND p.holder_lc = NEW.holder_lc
      AND p.starts_at <= NEW.expires_at AND p.expires_at > NEW.expires_at) THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'pass_end_' || NEW.id || '_' || h.id, h.id, 'pass.expired', NEW.id, 'pending', NEW.ended_at, NEW.ended_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"pass.expired"%'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER passes_expired_webhooks AFTER UPDATE OF ended_at ON passes FOR EACH ROW
  WHEN (OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL)
  EXECUTE FUNCTION passes_expired_webhooks();

-- A pass marked ended changes no read: whether one runs is a matter of its times (as 017 for a link's uses).
DROP TRIGGER passes_changed ON passes;
CREATE TRIGGER passes_changed AFTER INSERT OR UPDATE OF feed_id, holder_lc, starts_at, expires_at OR DELETE OR TRUNCATE
  ON passes FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
