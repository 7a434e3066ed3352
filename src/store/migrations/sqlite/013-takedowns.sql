-- Operator takedowns. A taken-down feed or entry is inactive (so every listing, board and tally that shows only
-- active ones leaves it out) and marked taken_down (so no owner's reactivation brings it back, and a direct read is
-- answered 451). The takedowns table is the record: why, when, and the activity to give back on reinstatement. The
-- ledger keeps every row.
ALTER TABLE feeds ADD COLUMN taken_down INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN taken_down INTEGER NOT NULL DEFAULT 0;
CREATE TABLE takedowns (
  id TEXT PRIMARY KEY,                  -- time-ordered: newest last
  kind TEXT NOT NULL,                   -- 'feed' or 'entry'
  target_id TEXT NOT NULL,
  feed_id TEXT NOT NULL,                -- the feed itself, or the entry's
  reason TEXT NOT NULL,
  was_active INTEGER NOT NULL,          -- the target's is_active when taken down
  taken_down_at INTEGER NOT NULL,
  reinstated_at INTEGER,
  reinstate_reason TEXT
);
CREATE UNIQUE INDEX takedowns_standing ON takedowns (target_id) WHERE reinstated_at IS NULL;
