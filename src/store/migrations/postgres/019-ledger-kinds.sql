-- Every ledger row says what it sold (issue 37): `kind` 'entry' (an entry, and its feed) or 'pass' (a feed's pass: its
-- feed, no entry). feed_id is kept on the row, so a feed's sales are listed (?feed_id=) and tallied without a join
-- through entries: the tallies of a feed's buyers and days now read it, and count a pass sale as a sale of its feed.
ALTER TABLE transactions ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'entry' CHECK (kind IN ('entry', 'pass'));
ALTER TABLE transactions ADD COLUMN feed_id text COLLATE "C" REFERENCES feeds (id);
UPDATE transactions t SET feed_id = e.feed_id FROM entries e WHERE e.id = t.entry_id;
CREATE INDEX transactions_feed ON transactions (feed_id, id);

CREATE OR REPLACE FUNCTION transactions_tally() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO address_totals (address_lc) VALUES (LEAST(NEW.pay_to_lc, NEW.payer_lc)), (GREATEST(NEW.pay_to_lc, NEW.payer_lc)) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM address_totals WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc) ORDER BY address_lc FOR UPDATE;
  UPDATE address_totals SET
    first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at),
    sold = sold + (address_lc = NEW.pay_to_lc)::int,
    revenue = revenue + CASE WHEN address_lc = NEW.pay_to_lc THEN NEW.amount ELSE 0 END,
    bought = bought + (address_lc = NEW.payer_lc)::int,
    spent = spent + CASE WHEN address_lc = NEW.payer_lc THEN NEW.amount ELSE 0 END
  WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc);
  INSERT INTO address_days (address_lc, day)
    VALUES (LEAST(NEW.pay_to_lc, NEW.payer_lc), NEW.created_at / 86400), (GREATEST(NEW.pay_to_lc, NEW.payer_lc), NEW.created_at / 86400)
    ON CONFLICT DO NOTHING;
  INSERT INTO address_pairs (pay_to_lc, payer_lc) VALUES (NEW.pay_to_lc, NEW.payer_lc) ON CONFLICT DO NOTHING;
  INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
    SELECT NEW.feed_id, NEW.payer_lc, NEW.created_at WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = GREATEST(feed_buyers.last_at, EXCLUDED.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = GREATEST(entry_buyers.last_at, EXCLUDED.last_at);
  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT NEW.feed_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.feed_id IS NOT NULL
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = feed_days.purchases + 1, revenue = feed_days.revenue + EXCLUDED.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = buyer_days.purchases + 1, spent = buyer_days.spent + EXCLUDED.spent;
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
  RETURN NULL;
END
$$;
