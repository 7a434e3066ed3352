-- The network each payment was made on and each sale recorded on (see the SQLite step of the same number). The rows
-- from before take the bound network as the column's default when it is added, which PostgreSQL keeps for existing
-- rows without rewriting them (a stored "missing value"); the default is dropped after, so every new row names its own.
DO $$
DECLARE bound text := (SELECT value::json ->> 'network' FROM meta WHERE key = 'chain_binding');
BEGIN
  EXECUTE format('ALTER TABLE payments ADD COLUMN network text COLLATE "C" DEFAULT %L', bound);
  EXECUTE format('ALTER TABLE transactions ADD COLUMN network text COLLATE "C" DEFAULT %L', bound);
END $$;
ALTER TABLE payments ALTER COLUMN network DROP DEFAULT;
ALTER TABLE transactions ALTER COLUMN network DROP DEFAULT;
CREATE INDEX transactions_network ON transactions (network, id);
