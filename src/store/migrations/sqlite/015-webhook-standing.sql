-- Each webhook endpoint's standing (domain/webhooks.ts), so that endpoints that fail hold no one else up: failures
-- counts its attempts in a row that got no 2xx (0 again at the next 2xx), and resting_until is when it may be tried
-- again after one (its circuit is open until then: none of its deliveries is attempted). Kept in the database, so a
-- new leader knows whom to rest.
ALTER TABLE webhook_endpoints ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN resting_until INTEGER NOT NULL DEFAULT 0;
-- The sender takes each endpoint's oldest due delivery, one per endpoint (never a global queue that one endpoint's
-- backlog fills).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
