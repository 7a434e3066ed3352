-- Nothing on the embedded engine: one process writes its database, and it counts its own commits
-- (PostgreSQL's 011 makes every instance on one database hear of the others' commits).
SELECT 1;
