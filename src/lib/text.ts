// Text as both engines keep it. SQLite compares text by its bytes (BINARY) and its lower() folds A-Z only; the
// PostgreSQL schema makes every text column collate "C" so it does the same (store/migrations/postgres/001-init.sql).
// What the process computes beside the SQL must agree with it.

/** Lower case as SQL lower() makes it on either engine: A-Z only ('É' stays 'É', as in the feed_tags rows). */
export const sqlLower = (text: string): string => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())

/**
 * A list of strings as the JSON text a column keeps (tags). Each string is stored as any text column stores one: a
 * lone surrogate (no Unicode character; a JSON body may carry one as "\ud800") becomes U+FFFD, as the UTF-8 of every
 * other column makes it on both engines. JSON.stringify would keep it as an escape, which SQLite keeps and
 * PostgreSQL's jsonb (the feed_tags triggers) refuses.
 */
export const textListJson = (list: readonly string[]): string => JSON.stringify(list.map((text) => text.toWellFormed()))

/** U+0000, which PostgreSQL's text cannot hold: no request may store it, on either engine (the same answer on both). */
export const NUL = '\u0000'

/** A string holding NUL, or an array or object with one somewhere inside. */
export function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL)
  if (Array.isArray(value)) return value.some(holdsNul)
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsNul)
  return false
}
