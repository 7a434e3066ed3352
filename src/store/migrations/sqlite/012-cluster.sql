-- Nothing on the embedded engine: one process, whose leaderboards are files beside its database, whose rate limits
-- are counted in memory, and whose payments wait for each other in memory (PostgreSQL's 012 shares these among
-- instances).
SELECT 1;
