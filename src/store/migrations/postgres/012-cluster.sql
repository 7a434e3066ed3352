-- What several instances on one database share beside the records.
--
-- Snapshots: the leaderboards and wallet ranks the leader builds, whole, as the JSON every instance installs (the
-- same bytes everywhere). Each publication raises the kind's generation and notifies trellis_snapshots
-- ('<kind>:<generation>') at commit; the others load it then, and at start.
CREATE TABLE snapshots (
  kind text COLLATE "C" PRIMARY KEY,
  generation bigint NOT NULL,
  generated_at bigint NOT NULL,
  body text COLLATE "C" NOT NULL
);

-- Rate limits: each instance decides locally while it holds tokens of a client's window, and leases more here when
-- they run out; never more than the limit are handed out per window, whatever the number of instances. UNLOGGED: a
-- crash forgets the windows (every client starts a new one), and a lease waits for no WAL flush. The database's
-- clock times the windows, so instances whose clocks differ still share them.
CREATE UNLOGGED TABLE rate_windows (
  key text COLLATE "C" PRIMARY KEY,
  reset_at double precision NOT NULL,
  granted integer NOT NULL
);
CREATE INDEX rate_windows_reset ON rate_windows (reset_at);

-- Up to `want` tokens of window `k` (`lim` per `window_s` seconds): `taken` is how many this call got (0: the window
-- is spent), `granted` how many all instances hold of it now, `reset_at` when it ends (the window's identity) and
-- `reset_in` the seconds until then.
CREATE FUNCTION trellis_lease(k text, want integer, lim integer, window_s double precision,
  OUT taken integer, OUT granted integer, OUT reset_at double precision, OUT reset_in double precision) LANGUAGE plpgsql AS $$
DECLARE
  now_s double precision := extract(epoch FROM clock_timestamp());
  before integer;
BEGIN
  INSERT INTO rate_windows AS w (key, reset_at, granted) VALUES (k, now_s + window_s, 0) ON CONFLICT (key) DO NOTHING;
  SELECT w.granted, w.reset_at INTO before, reset_at FROM rate_windows w WHERE w.key = k FOR UPDATE;
  IF reset_at <= now_s THEN
    before := 0;
    reset_at := now_s + window_s;
  END IF;
  taken := LEAST(want, GREATEST(lim - before, 0));
  granted := before + taken;
  reset_in := reset_at - now_s;
  UPDATE rate_windows w SET granted = trellis_lease.granted, reset_at = trellis_lease.reset_at WHERE w.key = k;
END
$$;

-- Payments: the instance settling a payment names itself, so another that meets the pending row waits for it while
-- that instance lives (heard in the change feed's heartbeats), and decides it from the chain once it does not.
ALTER TABLE payments ADD COLUMN settler text COLLATE "C";

-- An instance waiting for another's settlement hears when the payment leaves 'pending'
-- ('<payer>:<nonce>'), delivered when the transaction that settled or failed it commits.
CREATE FUNCTION trellis_payment_decided() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trellis_payments', NEW.payer_lc || ':' || NEW.nonce);
  RETURN NULL;
END
$$;
CREATE TRIGGER payments_decided AFTER UPDATE OF status ON payments FOR EACH ROW
  WHEN (OLD.status = 'pending' AND NEW.status <> 'pending') EXECUTE FUNCTION trellis_payment_decided();
