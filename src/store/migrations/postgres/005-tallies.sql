-- Statistics kept by the database itself. Triggers update them in the same transaction as each ledger row, feed and
-- entry, so leaderboards and wallet statistics never rescan the ledger. Days are UTC day numbers (seconds / 86400:
-- bigint divided by an integer, so truncated as in SQLite).
--
-- A literal port of the embedded engine's 005: "first time seen" is asked with NOT EXISTS before the pair is
-- inserted, which is exact only while one purchase is tallied at a time (here ledger_totals, updated first, makes
-- them wait for each other). Migration 010 replaces these functions with insert-first ones, and a PostgreSQL database
-- is always migrated through 010 before it is served.

-- The partial first day of a rolling period is read from the ledger by time.
CREATE INDEX transactions_time ON transactions (created_at);

-- Sales per feed and per buyer per day.
CREATE TABLE feed_days (
  feed_id text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  purchases bigint NOT NULL,
  revenue numeric(78,0) NOT NULL,
  PRIMARY KEY (feed_id, day)
);
CREATE INDEX feed_days_day ON feed_days (day);

CREATE TABLE buyer_days (
  payer_lc text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  purchases bigint NOT NULL,
  spent numeric(78,0) NOT NULL,
  PRIMARY KEY (payer_lc, day)
);
CREATE INDEX buyer_days_day ON buyer_days (day);

-- Who bought from which feed and which entry, and when last: "unique buyers in a period" is a count of the rows
-- whose last_at falls in it.
CREATE TABLE feed_buyers (
  feed_id text COLLATE "C" NOT NULL,
  payer_lc text COLLATE "C" NOT NULL,
  last_at bigint NOT NULL,
  PRIMARY KEY (feed_id, payer_lc)
);
CREATE INDEX feed_buyers_payer ON feed_buyers (payer_lc, last_at);

CREATE TABLE entry_buyers (
  entry_id text COLLATE "C" NOT NULL,
  payer_lc text COLLATE "C" NOT NULL,
  last_at bigint NOT NULL,
  PRIMARY KEY (entry_id, payer_lc)
);
CREATE INDEX entry_buyers_payer ON entry_buyers (payer_lc, last_at);

-- Seller–buyer pairs by address.
CREATE TABLE address_pairs (
  pay_to_lc text COLLATE "C" NOT NULL,
  payer_lc text COLLATE "C" NOT NULL,
  PRIMARY KEY (pay_to_lc, payer_lc)
);

-- Days on which an address created a feed or an entry, bought or sold.
CREATE TABLE address_days (
  address_lc text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  PRIMARY KEY (address_lc, day)
);

-- All-time figures per address (any payer or payee, wallet or not).
CREATE TABLE address_totals (
  address_lc text COLLATE "C" PRIMARY KEY,
  sold bigint NOT NULL DEFAULT 0,
  revenue numeric(78,0) NOT NULL DEFAULT 0,
  buyers bigint NOT NULL DEFAULT 0,
  bought bigint NOT NULL DEFAULT 0,
  spent numeric(78,0) NOT NULL DEFAULT 0,
  sellers bigint NOT NULL DEFAULT 0,
  feeds_bought_from bigint NOT NULL DEFAULT 0,
  entries_bought bigint NOT NULL DEFAULT 0,
  first_at bigint,
  last_at bigint,
  active_days bigint NOT NULL DEFAULT 0
);

-- The whole ledger: its size and sum, without counting it.
CREATE TABLE ledger_totals (
  id bigint PRIMARY KEY CHECK (id = 1),
  transactions bigint NOT NULL,
  revenue numeric(78,0) NOT NULL
);
INSERT INTO ledger_totals (id, transactions, revenue) SELECT 1, COUNT(*), COALESCE(SUM(amount), 0) FROM transactions;

-- Each "+ (NOT EXISTS (…))::int" counts a pair the first time it is seen; the pair is inserted by a later statement.
CREATE FUNCTION transactions_tally() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
  INSERT INTO address_totals (address_lc) VALUES (NEW.pay_to_lc), (NEW.payer_lc) ON CONFLICT DO NOTHING;
  UPDATE address_totals SET
    first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + (NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400))::int
  WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc);
  INSERT INTO address_days (address_lc, day) VALUES (NEW.pay_to_lc, NEW.created_at / 86400), (NEW.payer_lc, NEW.created_at / 86400) ON CONFLICT DO NOTHING;
  UPDATE address_totals SET sold = sold + 1, revenue = revenue + NEW.amount,
    buyers = buyers + (NOT EXISTS (SELECT 1 FROM address_pairs WHERE pay_to_lc = NEW.pay_to_lc AND payer_lc = NEW.payer_lc))::int
  WHERE address_lc = NEW.pay_to_lc;
  UPDATE address_totals SET bought = bought + 1, spent = spent + NEW.amount,
    sellers = sellers + (NOT EXISTS (SELECT 1 FROM address_pairs WHERE pay_to_lc = NEW.pay_to_lc AND payer_lc = NEW.payer_lc))::int,
    feeds_bought_from = feeds_bought_from + (EXISTS (SELECT 1 FROM entries e WHERE e.id = NEW.entry_id
      AND NOT EXISTS (SELECT 1 FROM feed_buyers b WHERE b.feed_id = e.feed_id AND b.payer_lc = NEW.payer_lc)))::int,
    entries_bought = entries_bought + (NEW.entry_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM entry_buyers b WHERE b.entry_id = NEW.entry_id AND b.payer_lc = NEW.payer_lc))::int
  WHERE address_lc = NEW.payer_lc;
  INSERT INTO address_pairs (pay_to_lc, payer_lc) VALUES (NEW.pay_to_lc, NEW.payer_lc) ON CONFLICT DO NOTHING;

  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT feed_id, NEW.created_at / 86400, 1, NEW.amount FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = feed_days.purchases + 1, revenue = feed_days.revenue + EXCLUDED.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = buyer_days.purchases + 1, spent = buyer_days.spent + EXCLUDED.spent;
  INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
    SELECT feed_id, NEW.payer_lc, NEW.created_at FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = GREATEST(feed_buyers.last_at, EXCLUDED.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = GREATEST(entry_buyers.last_at, EXCLUDED.last_at);
  RETURN NULL;
END
$$;
CREATE TRIGGER transactions_tally AFTER INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION transactions_tally();

-- Publishing is activity of the publisher.
CREATE FUNCTION feeds_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO address_totals (address_lc) SELECT address_lc FROM wallets WHERE id = NEW.owner_id ON CONFLICT DO NOTHING;
  UPDATE address_totals SET
    first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + (NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400))::int
  WHERE address_lc = (SELECT address_lc FROM wallets WHERE id = NEW.owner_id);
  INSERT INTO address_days (address_lc, day) SELECT address_lc, NEW.created_at / 86400 FROM wallets WHERE id = NEW.owner_id ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER feeds_activity AFTER INSERT ON feeds FOR EACH ROW EXECUTE FUNCTION feeds_activity();

CREATE FUNCTION entries_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO address_totals (address_lc)
    SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id ON CONFLICT DO NOTHING;
  UPDATE address_totals SET
    first_at = LEAST(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = GREATEST(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + (NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400))::int
  WHERE address_lc = (SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id);
  INSERT INTO address_days (address_lc, day)
    SELECT w.address_lc, NEW.created_at / 86400 FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER entries_activity AFTER INSERT ON entries FOR EACH ROW EXECUTE FUNCTION entries_activity();

-- What existed before this migration.
INSERT INTO feed_days (feed_id, day, purchases, revenue)
  SELECT e.feed_id, t.created_at / 86400, COUNT(*), SUM(t.amount) FROM transactions t JOIN entries e ON e.id = t.entry_id GROUP BY 1, 2;
INSERT INTO buyer_days (payer_lc, day, purchases, spent)
  SELECT payer_lc, created_at / 86400, COUNT(*), SUM(amount) FROM transactions GROUP BY 1, 2;
INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
  SELECT e.feed_id, t.payer_lc, MAX(t.created_at) FROM transactions t JOIN entries e ON e.id = t.entry_id GROUP BY 1, 2;
INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
  SELECT entry_id, payer_lc, MAX(created_at) FROM transactions WHERE entry_id IS NOT NULL GROUP BY 1, 2;
INSERT INTO address_pairs (pay_to_lc, payer_lc) SELECT DISTINCT pay_to_lc, payer_lc FROM transactions;
CREATE TEMP VIEW address_events (address_lc, at) AS
  SELECT w.address_lc, f.created_at FROM feeds f JOIN wallets w ON w.id = f.owner_id
  UNION ALL SELECT w.address_lc, e.created_at FROM entries e JOIN feeds f ON f.id = e.feed_id JOIN wallets w ON w.id = f.owner_id
  UNION ALL SELECT payer_lc, created_at FROM transactions
  UNION ALL SELECT pay_to_lc, created_at FROM transactions;
INSERT INTO address_days (address_lc, day) SELECT DISTINCT address_lc, at / 86400 FROM address_events;
INSERT INTO address_totals (address_lc, first_at, last_at, active_days, sold, revenue, buyers, bought, spent, sellers, feeds_bought_from, entries_bought)
  SELECT a.address_lc, a.first_at, a.last_at, d.n, COALESCE(s.n, 0), COALESCE(s.total, 0), COALESCE(s.other, 0),
    COALESCE(b.n, 0), COALESCE(b.total, 0), COALESCE(b.other, 0), COALESCE(fb.n, 0), COALESCE(eb.n, 0)
  FROM (SELECT address_lc, MIN(at) AS first_at, MAX(at) AS last_at FROM address_events GROUP BY 1) a
  JOIN (SELECT address_lc, COUNT(*) AS n FROM address_days GROUP BY 1) d ON d.address_lc = a.address_lc
  LEFT JOIN (SELECT pay_to_lc AS address_lc, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT payer_lc) AS other FROM transactions GROUP BY 1) s
    ON s.address_lc = a.address_lc
  LEFT JOIN (SELECT payer_lc AS address_lc, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT pay_to_lc) AS other FROM transactions GROUP BY 1) b
    ON b.address_lc = a.address_lc
  LEFT JOIN (SELECT payer_lc AS address_lc, COUNT(*) AS n FROM feed_buyers GROUP BY 1) fb ON fb.address_lc = a.address_lc
  LEFT JOIN (SELECT payer_lc AS address_lc, COUNT(*) AS n FROM entry_buyers GROUP BY 1) eb ON eb.address_lc = a.address_lc;
DROP VIEW address_events;
