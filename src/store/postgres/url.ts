// A PostgreSQL URL as it may be shown: in a log line, an error, the start line. The password (in the user part or
// a `password=` parameter) never is.

/** postgres://user@host:port/database, without password or parameters. */
export function shownPostgresUrl(url: string): string {
  try {
    const parsed = new URL(url)
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : ''
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`
  } catch {
    return 'an unparsable PostgreSQL URL'
  }
}
