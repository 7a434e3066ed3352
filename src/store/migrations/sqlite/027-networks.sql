-- The network each payment was made on and each sale recorded on (issue 40: a server sells on several networks).
-- Rows from before were made on the network the data directory is bound to (meta's chain_binding, 004); a directory
-- never bound yet has no payment, and its first start binds it.
ALTER TABLE payments ADD COLUMN network TEXT;
ALTER TABLE transactions ADD COLUMN network TEXT;
UPDATE payments SET network = (SELECT json_extract(value, '$.network') FROM meta WHERE key = 'chain_binding');
UPDATE transactions SET network = (SELECT json_extract(value, '$.network') FROM meta WHERE key = 'chain_binding');
CREATE INDEX transactions_network ON transactions (network, id);
