-- A pass holder's private feed URL (issue 37): at most one standing URL per feed and holder, until its holder revokes
-- it (revoked_at; the next request makes a new one). The row holds no token: the URL's token is the row's id with a
-- MAC under the server key (domain/pass-feed-urls.ts), so reading this table hands out no URL.
CREATE TABLE pass_feed_urls (
  id text COLLATE "C" PRIMARY KEY,
  feed_id text COLLATE "C" NOT NULL REFERENCES feeds (id),
  holder_lc text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE UNIQUE INDEX pass_feed_urls_standing ON pass_feed_urls (feed_id, holder_lc) WHERE revoked_at IS NULL;
-- A read through the URL keeps the row in the read memo: a revocation on any instance is a change (011).
CREATE TRIGGER pass_feed_urls_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pass_feed_urls
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_changed();
