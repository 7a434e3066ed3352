-- A creator's analytics (issue 39, GET /v1/wallets/{id}/analytics), read from tallies rather than the ledger: a range's
-- distinct and repeat buyers are counted over seller_buyer_days (a seller's sales per day and payer, its pass sales
-- among them), its entries ranked over entry_days; both are kept, as 005's tallies are, by a trigger in the same
-- transaction as each ledger row (feeds are ranked over 005's feed_days). Days are UTC day numbers (seconds / 86400).
CREATE TABLE seller_buyer_days (
  pay_to_lc TEXT NOT NULL,
  day INTEGER NOT NULL,
  payer_lc TEXT NOT NULL,
  purchases INTEGER NOT NULL,
  revenue INTEGER NOT NULL,
  passes INTEGER NOT NULL,
  PRIMARY KEY (pay_to_lc, day, payer_lc)
) WITHOUT ROWID;

CREATE TABLE entry_days (
  entry_id TEXT NOT NULL,
  day INTEGER NOT NULL,
  purchases INTEGER NOT NULL,
  revenue INTEGER NOT NULL,
  PRIMARY KEY (entry_id, day)
) WITHOUT ROWID;

CREATE TRIGGER transactions_analytics AFTER INSERT ON transactions BEGIN
  INSERT INTO seller_buyer_days (pay_to_lc, day, payer_lc, purchases, revenue, passes)
    VALUES (NEW.pay_to_lc, NEW.created_at / 86400, NEW.payer_lc, 1, NEW.amount, NEW.kind = 'pass')
    ON CONFLICT (pay_to_lc, day, payer_lc) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue,
      passes = passes + excluded.passes;
  INSERT INTO entry_days (entry_id, day, purchases, revenue)
    SELECT NEW.entry_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
END;

-- 402 challenges served (the answers to a read or a purchase without payment, or with one refused) per feed, day and
-- entry ('' for the feed's pass). Each instance counts them in memory and adds its counts every few seconds, off the
-- requests' path (domain/challenges.ts); no read of this table is kept in the read memo.
CREATE TABLE challenge_days (
  feed_id TEXT NOT NULL,
  day INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  challenges INTEGER NOT NULL,
  PRIMARY KEY (feed_id, day, entry_id)
) WITHOUT ROWID;

-- What existed before this migration.
INSERT INTO seller_buyer_days (pay_to_lc, day, payer_lc, purchases, revenue, passes)
  SELECT pay_to_lc, created_at / 86400, payer_lc, COUNT(*), SUM(amount), SUM(kind = 'pass') FROM transactions GROUP BY 1, 2, 3;
INSERT INTO entry_days (entry_id, day, purchases, revenue)
  SELECT entry_id, created_at / 86400, COUNT(*), SUM(amount) FROM transactions WHERE entry_id IS NOT NULL GROUP BY 1, 2;
