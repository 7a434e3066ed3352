// Media types (RFC 9110 §8.3.1): the grammar check for a `mime_type` we accept and store, and the safe value to put
// in a response header for whatever is already stored. Pure: no HTTP, no I/O.
//
//   media-type      = type "/" subtype *( OWS ";" OWS parameter )
//   type, subtype   = token                       token = 1*tchar
//   parameter       = token "=" ( token / quoted-string )
//   quoted-string   = DQUOTE *( qdtext / quoted-pair ) DQUOTE
//   qdtext          = SP / %x21 / %x23-5B / %x5D-7E   (printable ASCII except DQUOTE and "\")
//   quoted-pair     = "\" ( SP / VCHAR )
//   OWS             = *( SP / HTAB )
//
// Stricter than RFC 9110 on purpose: no obs-text (bytes >= 0x80), no HTAB inside quoted strings, no empty
// parameters ("text/plain;"), no leading or trailing whitespace, and at most MAX_MEDIA_TYPE_LENGTH characters.

export const MAX_MEDIA_TYPE_LENGTH = 100

/** The fallback for a stored value that is not a valid media type at all. */
export const FALLBACK_MEDIA_TYPE = 'application/octet-stream'

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED_STRING = '"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\x20-\\x7E])*"'
const PARAMETER = `${TOKEN}=(?:${TOKEN}|${QUOTED_STRING})`
// The separators (";", "=", DQUOTE, "\", OWS) are never tchar, so matching is linear; the length cap bounds it anyway.
const MEDIA_TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})(?:[ \\t]*;[ \\t]*${PARAMETER})*$`)
const TYPE_SLASH_SUBTYPE = new RegExp(`^${TOKEN}/${TOKEN}$`)
// Printable ASCII plus HTAB (which the grammar then allows only inside OWS).
const PRINTABLE = /^[\x20-\x7E\t]*$/

/** The lower-cased "type/subtype" of a valid media type, or null when `value` breaks the grammar or the limits. */
export function mediaTypeBase(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_MEDIA_TYPE_LENGTH) return null
  const match = MEDIA_TYPE.exec(value)
  return match ? `${match[1]}/${match[2]}`.toLowerCase() : null
}

export const isValidMediaType = (value: unknown): value is string => mediaTypeBase(value) !== null

export type MediaTypeCheck = { ok: true; base: string } | { ok: false; reason: string }

/**
 * Checks a client's `mime_type`: the whole value against the grammar, then its base type against `supported`
 * (lower-case "type/subtype" strings). `reason` is one line and never echoes characters that broke the grammar.
 */
export function checkMediaType(value: unknown, supported: readonly string[]): MediaTypeCheck {
  if (typeof value !== 'string' || value.length === 0) return { ok: false, reason: 'mime_type must be a media type such as text/plain' }
  if (value.length > MAX_MEDIA_TYPE_LENGTH || !PRINTABLE.test(value)) {
    return { ok: false, reason: `mime_type must be a media type of at most ${MAX_MEDIA_TYPE_LENGTH} printable ASCII characters` }
  }
  const base = mediaTypeBase(value)
  if (base === null) {
    return {
      ok: false,
      reason:
        'mime_type must be a media type: type/subtype, optionally followed by "; name=value" parameters (value a token or a quoted string)',
    }
  }
  if (!supported.includes(base)) return { ok: false, reason: `${base} is not a supported type` }
  return { ok: true, base }
}

/**
 * What to put in a header (Content-Type, an x402 mimeType) for a stored `mime_type`: the value itself when it is a
 * valid media type, else its base type (the part before the first ";", trimmed) when that is valid, else
 * application/octet-stream. Never throws; the result is always a valid media type.
 */
export function safeMediaType(value: unknown): string {
  if (isValidMediaType(value)) return value
  if (typeof value === 'string') {
    const base = value.split(';')[0].trim()
    if (base.length <= MAX_MEDIA_TYPE_LENGTH && TYPE_SLASH_SUBTYPE.test(base)) return base
  }
  return FALLBACK_MEDIA_TYPE
}
