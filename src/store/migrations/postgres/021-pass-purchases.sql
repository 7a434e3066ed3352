-- Passes are bought as entries are (issue 37), by the same payments: a payment sells an entry (entry_id) or a
-- feed's pass (pass_feed_id, with the duration it was offered at), never both; one pending payment per purchase of
-- either.
ALTER TABLE payments ALTER COLUMN entry_id DROP NOT NULL;
ALTER TABLE payments ADD COLUMN pass_feed_id text COLLATE "C" REFERENCES feeds (id);
ALTER TABLE payments ADD COLUMN pass_duration_s bigint;
ALTER TABLE payments ADD CONSTRAINT payments_sell_one CHECK ((entry_id IS NULL) <> (pass_feed_id IS NULL));
ALTER TABLE payments ADD CONSTRAINT payments_pass_terms CHECK ((pass_feed_id IS NULL) = (pass_duration_s IS NULL));
CREATE UNIQUE INDEX payments_one_pending_pass ON payments (payer_lc, pass_feed_id) WHERE status = 'pending' AND pass_feed_id IS NOT NULL;

-- The passes held: one row per pass sold, running from starts_at (the sale, or the end of the buyer's pass running
-- then: buying again extends it) to expires_at. A holder reads every paid entry of the feed while one runs.
CREATE TABLE passes (
  id text COLLATE "C" PRIMARY KEY,
  feed_id text COLLATE "C" NOT NULL REFERENCES feeds (id),
  holder_lc text COLLATE "C" NOT NULL,
  starts_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  transaction_id text COLLATE "C" NOT NULL UNIQUE REFERENCES transactions (id),
  created_at bigint NOT NULL
);
CREATE INDEX passes_holder ON passes (holder_lc, id);
CREATE INDEX passes_feed_holder ON passes (feed_id, holder_lc, expires_at);
-- A read of a paid entry asks whether its reader holds a pass: a pass sold is a change (011).
CREATE TRIGGER passes_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON passes
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
