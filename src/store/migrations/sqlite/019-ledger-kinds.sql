-- Every ledger row says what it sold (issue 37): `kind` 'entry' (an entry, and its feed) or 'pass' (a feed's pass: its
-- feed, no entry). feed_id is kept on the row, so a feed's sales are listed (?feed_id=) and tallied without a join
-- through entries: the tallies of a feed's buyers and days now read it, and count a pass sale as a sale of its feed.
ALTER TABLE transactions ADD COLUMN kind TEXT NOT NULL DEFAULT 'entry' CHECK (kind IN ('entry', 'pass'));
ALTER TABLE transactions ADD COLUMN feed_id TEXT REFERENCES feeds (id);
UPDATE transactions SET feed_id = (SELECT feed_id FROM entries WHERE entries.id = transactions.entry_id);
CREATE INDEX transactions_feed ON transactions (feed_id, id);

DROP TRIGGER transactions_tally;
CREATE TRIGGER transactions_tally AFTER INSERT ON transactions BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc) VALUES (NEW.pay_to_lc), (NEW.payer_lc);
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at),
    sold = sold + (address_lc = NEW.pay_to_lc),
    revenue = revenue + CASE WHEN address_lc = NEW.pay_to_lc THEN NEW.amount ELSE 0 END,
    bought = bought + (address_lc = NEW.payer_lc),
    spent = spent + CASE WHEN address_lc = NEW.payer_lc THEN NEW.amount ELSE 0 END
  WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc);
  INSERT OR IGNORE INTO address_days (address_lc, day) VALUES (NEW.pay_to_lc, NEW.created_at / 86400), (NEW.payer_lc, NEW.created_at / 86400);
  INSERT OR IGNORE INTO address_pairs (pay_to_lc, payer_lc) VALUES (NEW.pay_to_lc, NEW.payer_lc);
  INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
    SELECT NEW.feed_id, NEW.payer_lc, NEW.created_at WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT NEW.feed_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = purchases + 1, spent = spent + excluded.spent;
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
END;
