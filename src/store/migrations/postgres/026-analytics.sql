-- A creator's analytics (see the SQLite step of the same number for the model). The sale tallies notify the change
-- feed as 005's do; challenge_days does not (no read of it is kept), as the webhook tables do not.
CREATE TABLE seller_buyer_days (
  pay_to_lc text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  payer_lc text COLLATE "C" NOT NULL,
  purchases bigint NOT NULL,
  revenue numeric(78,0) NOT NULL,
  passes bigint NOT NULL,
  PRIMARY KEY (pay_to_lc, day, payer_lc)
);

CREATE TABLE entry_days (
  entry_id text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  purchases bigint NOT NULL,
  revenue numeric(78,0) NOT NULL,
  PRIMARY KEY (entry_id, day)
);

-- Fired before transactions_tally (PostgreSQL fires a table's triggers by name): every sale takes these rows first,
-- then 005's, always in that order, so two sales never wait for each other both ways.
CREATE FUNCTION transactions_analytics() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO seller_buyer_days (pay_to_lc, day, payer_lc, purchases, revenue, passes)
    VALUES (NEW.pay_to_lc, NEW.created_at / 86400, NEW.payer_lc, 1, NEW.amount, (NEW.kind = 'pass')::int)
    ON CONFLICT (pay_to_lc, day, payer_lc) DO UPDATE SET purchases = seller_buyer_days.purchases + 1,
      revenue = seller_buyer_days.revenue + EXCLUDED.revenue, passes = seller_buyer_days.passes + EXCLUDED.passes;
  INSERT INTO entry_days (entry_id, day, purchases, revenue)
    SELECT NEW.entry_id, NEW.created_at / 86400, 1, NEW.amount WHERE NEW.entry_id IS NOT NULL
    ON CONFLICT (entry_id, day) DO UPDATE SET purchases = entry_days.purchases + 1, revenue = entry_days.revenue + EXCLUDED.revenue;
  RETURN NULL;
END
$$;
CREATE TRIGGER transactions_analytics AFTER INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION transactions_analytics();

CREATE TABLE challenge_days (
  feed_id text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  entry_id text COLLATE "C" NOT NULL,
  challenges bigint NOT NULL,
  PRIMARY KEY (feed_id, day, entry_id)
);

CREATE TRIGGER seller_buyer_days_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON seller_buyer_days
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
CREATE TRIGGER entry_days_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON entry_days
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();

INSERT INTO seller_buyer_days (pay_to_lc, day, payer_lc, purchases, revenue, passes)
  SELECT pay_to_lc, created_at / 86400, payer_lc, COUNT(*), SUM(amount), SUM((kind = 'pass')::int) FROM transactions GROUP BY 1, 2, 3;
INSERT INTO entry_days (entry_id, day, purchases, revenue)
  SELECT entry_id, created_at / 86400, COUNT(*), SUM(amount) FROM transactions WHERE entry_id IS NOT NULL GROUP BY 1, 2;
