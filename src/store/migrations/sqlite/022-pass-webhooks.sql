-- Pass webhooks (issue 37): pass.sold when a pass is recorded (in the transaction that records its sale), and
-- pass.expired when a holder's time with a feed runs out. The expiry job marks each pass whose expires_at has passed
-- (ended_at); the event is told only when no pass of the same holder and feed runs on from that moment (one bought
-- ahead extends it), so a holder who renews in time is never told to the creator as lost.
ALTER TABLE passes ADD COLUMN ended_at INTEGER;
CREATE INDEX passes_ending ON passes (expires_at) WHERE ended_at IS NULL;

CREATE TRIGGER passes_sold_webhooks AFTER INSERT ON passes BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'pass_' || NEW.id || '_' || h.id, h.id, 'pass.sold', NEW.id, 'pending', NEW.created_at, NEW.created_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"pass.sold"%';
END;

CREATE TRIGGER passes_expired_webhooks AFTER UPDATE OF ended_at ON passes
  WHEN OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM passes p WHERE p.feed_id = NEW.feed_id AND p.holder_lc = NEW.holder_lc
      AND p.starts_at <= NEW.expires_at AND p.expires_at > NEW.expires_at) BEGIN
  INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, created_at)
    SELECT 'pass_end_' || NEW.id || '_' || h.id, h.id, 'pass.expired', NEW.id, 'pending', NEW.ended_at, NEW.ended_at
    FROM feeds f JOIN webhook_endpoints h ON h.wallet_id = f.owner_id
    WHERE f.id = NEW.feed_id AND h.is_active = 1 AND h.events LIKE '%"pass.expired"%';
END;
