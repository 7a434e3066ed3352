-- The change feed: every statement that writes records kept in the read memo notifies channel trellis_changes,
-- delivered when (and only if) its transaction commits, and once per transaction whatever it wrote (PostgreSQL folds
-- identical notifications of one transaction into one). The payload names the instance that wrote (its connections
-- set trellis.instance), so each instance skips its own commits, which it has counted already; a writer that sets
-- none (a data command, psql) sends an empty payload, which every instance takes as a change.
-- Not here: nonces, payments, meta (no read of them is kept).
CREATE FUNCTION trellis_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trellis_changes', COALESCE(current_setting('trellis.instance', true), ''));
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['wallets', 'categories', 'feeds', 'feed_tags', 'entries', 'images', 'transactions', 'purchases',
    'access_links', 'ledger_totals', 'address_totals', 'address_days', 'address_pairs', 'feed_buyers', 'entry_buyers',
    'feed_days', 'buyer_days']
  LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed()', t || '_changed', t);
  END LOOP;
END
$$;
