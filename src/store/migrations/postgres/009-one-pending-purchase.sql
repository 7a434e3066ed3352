-- One pending payment per purchase (payer, entry): a second authorization for an entry whose first is still being
-- settled is not sent (two could both land and charge twice), on any engine and from any number of servers.
-- The pending row is the lock: insertPending's ON CONFLICT DO NOTHING tells the request whether it made the row.
--
-- An older Trellis could leave several payments of one purchase pending together (retries during an RPC outage).
-- They stay pending until the chain decides each one; pending_slot numbers them (0 the oldest) so the index holds
-- them all. Every payment written since has slot 0.
ALTER TABLE payments ADD COLUMN pending_slot bigint NOT NULL DEFAULT 0;
UPDATE payments SET pending_slot = (
  SELECT COUNT(*) FROM payments o
  WHERE o.status = 'pending' AND o.payer_lc = payments.payer_lc AND o.entry_id = payments.entry_id
    AND (o.created_at < payments.created_at OR (o.created_at = payments.created_at AND o.id < payments.id))
) WHERE status = 'pending';
CREATE UNIQUE INDEX payments_one_pending_purchase ON payments (payer_lc, entry_id, pending_slot) WHERE status = 'pending';
