-- The key a paid entry's content is sealed under (content/sealing.ts); NULL for free entries and for entries
-- stored before sealing, whose content is stored in the clear.
ALTER TABLE entries ADD COLUMN content_key bytea;
