-- The tallies of 005, each "first time seen" counted by the insert that records it: an AFTER INSERT trigger on each
-- pair table (address and day, seller and buyer, feed and buyer, entry and buyer) adds one to its total, and an
-- INSERT OR IGNORE that finds the pair there inserts nothing, so nothing is added. Asking "does it exist yet?"
-- before inserting is exact only with one writer; counting inserts is exact on any engine (PostgreSQL's port uses the
-- same triggers, where ON CONFLICT DO NOTHING fires no insert trigger either). The ledger's own totals come last.
CREATE TRIGGER address_days_first AFTER INSERT ON address_days BEGIN
  UPDATE address_totals SET active_days = active_days + 1 WHERE address_lc = NEW.address_lc;
END;
CREATE TRIGGER address_pairs_first AFTER INSERT ON address_pairs BEGIN
  UPDATE address_totals SET buyers = buyers + 1 WHERE address_lc = NEW.pay_to_lc;
  UPDATE address_totals SET sellers = sellers + 1 WHERE address_lc = NEW.payer_lc;
END;
CREATE TRIGGER feed_buyers_first AFTER INSERT ON feed_buyers BEGIN
  UPDATE address_totals SET feeds_bought_from = feeds_bought_from + 1 WHERE address_lc = NEW.payer_lc;
END;
CREATE TRIGGER entry_buyers_first AFTER INSERT ON entry_buyers BEGIN
  UPDATE address_totals SET entries_bought = entries_bought + 1 WHERE address_lc = NEW.payer_lc;
END;

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
    SELECT feed_id, NEW.payer_lc, NEW.created_at FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT feed_id, NEW.created_at / 86400, 1, NEW.amount FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = purchases + 1, spent = spent + excluded.spent;
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
END;

DROP TRIGGER feeds_activity;
CREATE TRIGGER feeds_activity AFTER INSERT ON feeds BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc) SELECT address_lc FROM wallets WHERE id = NEW.owner_id;
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at)
  WHERE address_lc = (SELECT address_lc FROM wallets WHERE id = NEW.owner_id);
  INSERT OR IGNORE INTO address_days (address_lc, day) SELECT address_lc, NEW.created_at / 86400 FROM wallets WHERE id = NEW.owner_id;
END;

DROP TRIGGER entries_activity;
CREATE TRIGGER entries_activity AFTER INSERT ON entries BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc)
    SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id;
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at)
  WHERE address_lc = (SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id);
  INSERT OR IGNORE INTO address_days (address_lc, day)
    SELECT w.address_lc, NEW.created_at / 86400 FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id;
END;
