-- Operator takedowns (see the SQLite step of the same number for the model).
ALTER TABLE feeds ADD COLUMN taken_down smallint NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN taken_down smallint NOT NULL DEFAULT 0;
CREATE TABLE takedowns (
  id text COLLATE "C" PRIMARY KEY,
  kind text COLLATE "C" NOT NULL,
  target_id text COLLATE "C" NOT NULL,
  feed_id text COLLATE "C" NOT NULL,
  reason text COLLATE "C" NOT NULL,
  was_active smallint NOT NULL,
  taken_down_at bigint NOT NULL,
  reinstated_at bigint,
  reinstate_reason text COLLATE "C"
);
CREATE UNIQUE INDEX takedowns_standing ON takedowns (target_id) WHERE reinstated_at IS NULL;
CREATE TRIGGER takedowns_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON takedowns FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
-- Every instance leaves a taken-down feed out of the leaderboards it serves at once: a takedown or reinstatement
-- notifies trellis_takedowns at commit, and each instance reads the standing ones again.
CREATE FUNCTION trellis_takedowns_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trellis_takedowns', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER takedowns_notice AFTER INSERT OR UPDATE ON takedowns FOR EACH STATEMENT EXECUTE FUNCTION trellis_takedowns_changed();
