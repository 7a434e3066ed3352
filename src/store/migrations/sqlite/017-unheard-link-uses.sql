-- Nothing on the embedded engine: one process writes its database, and a use is an unkept write there already
-- (PostgreSQL's 017 stops other instances hearing of a link's uses as a change).
SELECT 1;
