-- A pass holder's private feed URL (issue 37): at most one standing URL per feed and holder, until its holder revokes
-- it (revoked_at; the next request makes a new one). The row holds no token: the URL's token is the row's id with a
-- MAC under the server key (domain/pass-feed-urls.ts), so reading this table hands out no URL.
CREATE TABLE pass_feed_urls (
  id TEXT PRIMARY KEY,
  feed_id TEXT NOT NULL REFERENCES feeds (id),
  holder_lc TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE UNIQUE INDEX pass_feed_urls_standing ON pass_feed_urls (feed_id, holder_lc) WHERE revoked_at IS NULL;
