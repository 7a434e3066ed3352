-- Browser sessions ended by sign-out before their token's expiry (store/ended-sessions.ts); purged after it.
CREATE TABLE ended_sessions (
  id text COLLATE "C" PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX ended_sessions_expiry ON ended_sessions (expires_at);
-- Every instance knows of a sign-out at once without asking the table on each read: its insert notifies
-- trellis_sessions at commit with the session's id (domain/live-sessions.ts).
CREATE FUNCTION trellis_session_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trellis_sessions', NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER ended_sessions_notice AFTER INSERT ON ended_sessions FOR EACH ROW EXECUTE FUNCTION trellis_session_ended();
