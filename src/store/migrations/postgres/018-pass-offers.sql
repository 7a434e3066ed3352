-- A feed's pass on sale (issue 37): one offer per feed, changed by each PUT for later buyers only (a sale records
-- the price and duration it was made at). Withdrawn (is_active 0), the row stays: holders keep their time.
CREATE TABLE pass_offers (
  feed_id text COLLATE "C" PRIMARY KEY REFERENCES feeds (id),
  price numeric(78,0) NOT NULL CHECK (price > 0),      -- USDC, smallest unit
  duration_s bigint NOT NULL CHECK (duration_s BETWEEN 60 AND 31536000),
  description text COLLATE "C",
  is_active smallint NOT NULL DEFAULT 1,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
-- A feed read carries its offer, and is kept in every instance's read memo: an offer's change is a change (011).
CREATE TRIGGER pass_offers_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pass_offers
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
