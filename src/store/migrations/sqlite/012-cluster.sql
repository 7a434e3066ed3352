-- The instance settling a payment (PostgreSQL's 012 shares snapshots, rate windows and payment notices among
-- instances; the embedded engine's one process keeps those in files and memory, and always settles its own).
ALTER TABLE payments ADD COLUMN settler TEXT;
