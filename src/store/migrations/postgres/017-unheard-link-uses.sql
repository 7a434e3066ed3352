-- A use of an access link (current_uses, last_used_at) changes nothing another instance keeps a read of: the open
-- that counts it is decided by its own UPDATE. Heard as a change, every open emptied the read memo of every other
-- instance. A link's creation, revocation (is_active), and removal are still heard: opens keep what they read of it.
DROP TRIGGER access_links_changed ON access_links;
CREATE TRIGGER access_links_changed AFTER INSERT OR UPDATE OF is_active, expires_at, max_uses, entry_id, feed_id OR DELETE OR TRUNCATE
  ON access_links FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
