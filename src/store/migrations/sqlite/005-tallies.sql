-- Statistics kept by the database itself. Triggers update them in the same transaction as each ledger row, feed and
-- entry, so leaderboards and wallet statistics never rescan the ledger. Days are UTC day numbers (seconds / 86400).

-- The partial first day of a rolling period is read from the ledger by time.
CREATE INDEX transactions_time ON transactions (created_at);

-- Sales per feed and per buyer per day.
CREATE TABLE feed_days (
  feed_id TEXT NOT NULL,
  day INTEGER NOT NULL,
  purchases INTEGER NOT NULL,
  revenue INTEGER NOT NULL,
  PRIMARY KEY (feed_id, day)
) WITHOUT ROWID;
CREATE INDEX feed_days_day ON feed_days (day);

CREATE TABLE buyer_days (
  payer_lc TEXT NOT NULL,
  day INTEGER NOT NULL,
  purchases INTEGER NOT NULL,
  spent INTEGER NOT NULL,
  PRIMARY KEY (payer_lc, day)
) WITHOUT ROWID;
CREATE INDEX buyer_days_day ON buyer_days (day);

-- Who bought from which feed and which entry, and when last: "unique buyers in a period" is a count of the rows
-- whose last_at falls in it.
CREATE TABLE feed_buyers (
  feed_id TEXT NOT NULL,
  payer_lc TEXT NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (feed_id, payer_lc)
) WITHOUT ROWID;
CREATE INDEX feed_buyers_payer ON feed_buyers (payer_lc, last_at);

CREATE TABLE entry_buyers (
  entry_id TEXT NOT NULL,
  payer_lc TEXT NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (entry_id, payer_lc)
) WITHOUT ROWID;
CREATE INDEX entry_buyers_payer ON entry_buyers (payer_lc, last_at);

-- Seller–buyer pairs by address.
CREATE TABLE address_pairs (
  pay_to_lc TEXT NOT NULL,
  payer_lc TEXT NOT NULL,
  PRIMARY KEY (pay_to_lc, payer_lc)
) WITHOUT ROWID;

-- Days on which an address created a feed or an entry, bought or sold.
CREATE TABLE address_days (
  address_lc TEXT NOT NULL,
  day INTEGER NOT NULL,
  PRIMARY KEY (address_lc, day)
) WITHOUT ROWID;

-- All-time figures per address (any payer or payee, wallet or not).
CREATE TABLE address_totals (
  address_lc TEXT PRIMARY KEY,
  sold INTEGER NOT NULL DEFAULT 0,
  revenue INTEGER NOT NULL DEFAULT 0,
  buyers INTEGER NOT NULL DEFAULT 0,
  bought INTEGER NOT NULL DEFAULT 0,
  spent INTEGER NOT NULL DEFAULT 0,
  sellers INTEGER NOT NULL DEFAULT 0,
  feeds_bought_from INTEGER NOT NULL DEFAULT 0,
  entries_bought INTEGER NOT NULL DEFAULT 0,
  first_at INTEGER,
  last_at INTEGER,
  active_days INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The whole ledger: its size and sum, without counting it.
CREATE TABLE ledger_totals (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  transactions INTEGER NOT NULL,
  revenue INTEGER NOT NULL
);
INSERT INTO ledger_totals (id, transactions, revenue) SELECT 1, COUNT(*), COALESCE(SUM(amount), 0) FROM transactions;

-- Each "+ NOT EXISTS (…)" counts a pair the first time it is seen; the pair is inserted by a later statement.
CREATE TRIGGER transactions_tally AFTER INSERT ON transactions BEGIN
  UPDATE ledger_totals SET transactions = transactions + 1, revenue = revenue + NEW.amount;
  INSERT OR IGNORE INTO address_totals (address_lc) VALUES (NEW.pay_to_lc), (NEW.payer_lc);
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400)
  WHERE address_lc IN (NEW.pay_to_lc, NEW.payer_lc);
  INSERT OR IGNORE INTO address_days (address_lc, day) VALUES (NEW.pay_to_lc, NEW.created_at / 86400), (NEW.payer_lc, NEW.created_at / 86400);
  UPDATE address_totals SET sold = sold + 1, revenue = revenue + NEW.amount,
    buyers = buyers + NOT EXISTS (SELECT 1 FROM address_pairs WHERE pay_to_lc = NEW.pay_to_lc AND payer_lc = NEW.payer_lc)
  WHERE address_lc = NEW.pay_to_lc;
  UPDATE address_totals SET bought = bought + 1, spent = spent + NEW.amount,
    sellers = sellers + NOT EXISTS (SELECT 1 FROM address_pairs WHERE pay_to_lc = NEW.pay_to_lc AND payer_lc = NEW.payer_lc),
    feeds_bought_from = feeds_bought_from + EXISTS (SELECT 1 FROM entries e WHERE e.id = NEW.entry_id
      AND NOT EXISTS (SELECT 1 FROM feed_buyers b WHERE b.feed_id = e.feed_id AND b.payer_lc = NEW.payer_lc)),
    entries_bought = entries_bought + (NEW.entry_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM entry_buyers b WHERE b.entry_id = NEW.entry_id AND b.payer_lc = NEW.payer_lc))
  WHERE address_lc = NEW.payer_lc;
  INSERT OR IGNORE INTO address_pairs (pay_to_lc, payer_lc) VALUES (NEW.pay_to_lc, NEW.payer_lc);

  INSERT INTO feed_days (feed_id, day, purchases, revenue)
    SELECT feed_id, NEW.created_at / 86400, 1, NEW.amount FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, day) DO UPDATE SET purchases = purchases + 1, revenue = revenue + excluded.revenue;
  INSERT INTO buyer_days (payer_lc, day, purchases, spent) VALUES (NEW.payer_lc, NEW.created_at / 86400, 1, NEW.amount)
    ON CONFLICT (payer_lc, day) DO UPDATE SET purchases = purchases + 1, spent = spent + excluded.spent;
  INSERT INTO feed_buyers (feed_id, payer_lc, last_at)
    SELECT feed_id, NEW.payer_lc, NEW.created_at FROM entries WHERE id = NEW.entry_id
    ON CONFLICT (feed_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
  INSERT INTO entry_buyers (entry_id, payer_lc, last_at)
    SELECT NEW.entry_id, NEW.payer_lc, NEW.created_at WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, payer_lc) DO UPDATE SET last_at = MAX(last_at, excluded.last_at);
END;

-- Publishing is activity of the publisher.
CREATE TRIGGER feeds_activity AFTER INSERT ON feeds BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc) SELECT address_lc FROM wallets WHERE id = NEW.owner_id;
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400)
  WHERE address_lc = (SELECT address_lc FROM wallets WHERE id = NEW.owner_id);
  INSERT OR IGNORE INTO address_days (address_lc, day) SELECT address_lc, NEW.created_at / 86400 FROM wallets WHERE id = NEW.owner_id;
END;

CREATE TRIGGER entries_activity AFTER INSERT ON entries BEGIN
  INSERT OR IGNORE INTO address_totals (address_lc)
    SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id;
  UPDATE address_totals SET
    first_at = MIN(COALESCE(first_at, NEW.created_at), NEW.created_at),
    last_at = MAX(COALESCE(last_at, NEW.created_at), NEW.created_at),
    active_days = active_days + NOT EXISTS (SELECT 1 FROM address_days d WHERE d.address_lc = address_totals.address_lc AND d.day = NEW.created_at / 86400)
  WHERE address_lc = (SELECT w.address_lc FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id);
  INSERT OR IGNORE INTO address_days (address_lc, day)
    SELECT w.address_lc, NEW.created_at / 86400 FROM feeds f JOIN wallets w ON w.id = f.owner_id WHERE f.id = NEW.feed_id;
END;

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
