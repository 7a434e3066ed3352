// Text with NUL on its way from an embedded database into PostgreSQL, which cannot hold it: how each value is carried
// over (nulPolicy), and how a load's changes and refusals read for an operator.
import { safeMediaType } from '../domain/media-type.ts'
import type { NulPolicy, NulText, UnloadableText } from '../store/records.ts'

/**
 * Text with NUL (U+0000), which an embedded database may hold from an older Trellis and PostgreSQL's text cannot, on
 * its way into PostgreSQL. Carried over where what is served stays the same: a stored media type is served as
 * safeMediaType makes it (a NUL never passes), so it is stored as that; a tag with NUL can never be asked for (a NUL in
 * a query is refused), so its lookup row (feed_tags) is left out while the feed keeps the tag (in its JSON, the NUL
 * escaped). Anything else is served as stored, which PostgreSQL cannot do: with `replaceNul` each NUL becomes U+FFFD,
 * else the load is refused.
 */
export function nulPolicy(replaceNul: boolean): NulPolicy {
  return ({ table, column, value }) => {
    if (table === 'entries' && column === 'mime_type') return safeMediaType(value)
    if (table === 'feed_tags') return 'drop'
    return replaceNul ? value.replaceAll('\u0000', '\uFFFD') : null
  }
}

/** `entries.title of entries id "…"`: a value of a copy, as an operator finds it. */
const placeOf = (text: NulText) => {
  const key = Object.entries(text.key)
    .map(([column, value]) => `${column} ${JSON.stringify(typeof value === 'bigint' ? Number(value) : value)}`)
    .join(', ')
  return `${text.table}.${text.column} of the ${text.table} row ${key}`
}

/** What a load did with each NUL it carried over, for the command's answer. */
export const changedText = (carried: Array<{ text: NulText; stored: string | 'drop' }>) =>
  carried.map(({ text, stored }) =>
    stored === 'drop'
      ? `${placeOf(text)}: not copied (a tag with NUL cannot be asked for; the feed keeps it)`
      : text.column === 'mime_type'
        ? `${placeOf(text)}: stored as ${JSON.stringify(stored)}, the type it is served as`
        : `${placeOf(text)}: stored with U+FFFD for each NUL`,
  )

/** The refusal of a load whose text PostgreSQL cannot store: every value (the first 20), and `fix`. */
export function unloadable(error: UnloadableText, holder: string, fix: string): Error {
  const shown = error.values.slice(0, 20).map(placeOf)
  const more = error.values.length > shown.length ? `, and ${error.values.length - shown.length} more` : ''
  return new Error(
    `${holder} holds ${error.message}, which PostgreSQL cannot store: ${shown.join('; ')}${more}. Nothing was loaded. ${fix}`,
  )
}
