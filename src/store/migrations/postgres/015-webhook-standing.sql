-- Each webhook endpoint's standing (see the SQLite step of the same number).
ALTER TABLE webhook_endpoints ADD COLUMN failures bigint NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN resting_until bigint NOT NULL DEFAULT 0;
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
