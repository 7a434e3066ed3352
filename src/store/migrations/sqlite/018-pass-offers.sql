-- A feed's pass on sale (issue 37): one offer per feed, changed by each PUT for later buyers only (a sale records
-- the price and duration it was made at). Withdrawn (is_active 0), the row stays: holders keep their time.
CREATE TABLE pass_offers (
  feed_id TEXT PRIMARY KEY REFERENCES feeds (id),
  price INTEGER NOT NULL CHECK (price > 0),            -- USDC, smallest unit
  duration_s INTEGER NOT NULL CHECK (duration_s BETWEEN 60 AND 31536000),
  description TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
