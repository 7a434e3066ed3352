-- The tallies of 005, each "first time seen" counted by the insert that records it: an AFTER INSERT trigger on each
-- pair table (address and day, seller and buyer, feed and buyer, entry and buyer) adds one to its total, and an
-- INSERT … ON CONFLICT DO NOTHING (or DO UPDATE) that finds the pair there fires no insert trigger, so nothing is
-- added. Asking "does it exist yet?" before inserting is exact only with one writer; counting inserts is exact with
-- any number, since a second insert of a pair waits for the first one's transaction and then finds the row.
--
-- Lock order, so concurrent purchases never deadlock: the two address_totals rows of a sale are created and locked in
-- address order before anything else (every other row a sale writes is keyed by one of those addresses, or is its
-- feed's day), and ledger_totals, the one row every sale writes, comes last.
CREATE FUNCTION address_days_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE address_totals SET active_days = active_days + 1 WHERE address_lc = NEW.address_lc;
  RETURN NULL;
END
$$;
CREATE TRIGGER address_days_first AFTER INSERT ON address_days FOR EACH ROW EXECUTE FUNCTION address_days_first();

CREATE FUNCTION address_pairs_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM address_totals WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc) ORDER BY address_lc FOR UPDATE;
  UPDATE address_totals SET buyers = buyers + 1 WHERE address_lc = NEW.pay_to_lc;
  UPDATE address_totals SET sellers = sellers + 1 WHERE address_lc = NEW.payer_lc;
  RETURN NULL;
END
$$;
CREATE TRIGGER address_pairs_first AFTER INSERT ON address_pairs FOR EACH ROW EXECUTE FUNCTION address_pairs_first();

CREATE FUNCTION feed_buyers_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE address_totals SET feeds_bought_from = feeds_bought_from + 1 WHERE address_lc = NEW.payer_lc;
  RETURN NULL;
END
$$;
CREATE TRIGGER feed_buyers_first AFTER INSERT ON feed_buyers FOR EACH ROW EXECUTE FUNCTION feed_buyers_first();

CREATE FUNCTION entry_buyers_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE address_totals SET entries_bought = entries_bought + 1 WHERE address_lc = NEW.payer_lc;
  RETURN NULL;
END
$$;
CREATE TRIGGER entry_buyers_first AFTER INSERT ON entry_buyers FOR EACH ROW EXECUTE FUNCTION entry_buyers_first();

-- The triggers of 005 stay; their functions are replaced.
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
    SELECT feed_id, NEW.payer_lc, NEW.created_at FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = GREATEST(feed_buyers.last_at, EXCLUDED.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = GREATEST(entry_buyers.last_at, EXCLUDED.last_at);
  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT feed_id, NEW.created_at / 86400, 1, NEW.amount FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = feed_days.purchases + 1, revenue = feed_days.revenue + EXCLUDED.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = buyer_days.purchases + 1, spent = buyer_days.spent + EXCLUDED.spent;
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION feeds_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO address_totals (address_lc) SELECT address_lc FROM wallets WHERE id = NEW.owner_id ON CONFLICT DO NOTHING;
  UPDATE address_totals SET
    first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at)
  WHERE address_lc = (SELECT address_lc FROM wallets WHERE id = NEW.owner_id);
  INSERT INTO address_days (address_lc, day) SELECT address_lc, NEW.created_at / 86400 FROM wallets WHERE id = NEW.owner_id ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

-- The owner is looked up once; most entries of a busy owner fall within the span already recorded, and then no
-- address_totals row is written or locked (concurrent posts of one owner do not queue on it).
CREATE OR REPLACE FUNCTION entries_activity() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  owner_lc text;
BEGIN
  SELECT w.address_lc INTO owner_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id;
  INSERT INTO address_totals (address_lc, first_at, last_at) VALUES (owner_lc, NEW.created_at, NEW.created_at) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    UPDATE address_totals SET
      first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
      last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at)
    WHERE address_lc = owner_lc AND (first_at IS NULL OR last_at IS NULL OR NEW.created_at < first_at OR NEW.created_at > last_at);
  END IF;
  INSERT INTO address_days (address_lc, day) VALUES (owner_lc, NEW.created_at / 86400) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
