// A free entry's content as a public feed carries it (syndication.ts): HTML made safe as the pages make it. Markdown
// rendered and sanitized, HTML kept to the same allow-list (markdown.ts: no script, no event handler, no javascript:
// link, no iframe, no image); plain text escaped into paragraphs (and carried as the text itself too); JSON
// pretty-printed in a <pre>. Only the opening of a long content is carried (FEED_BODY_BYTES); the feed links the rest.
import { escapeHtml, Html, html } from './html.ts'
import { renderMarkdown, sanitizeMarkup } from './markdown.ts'

/**
 * How much of a free entry's content a public feed carries: its first 32 KiB (a long essay whole; a larger text
 * is cut there, with a link to its page). Rendering 32 KiB of Markdown costs about 30 ms, once per content.
 */
export const FEED_BODY_BYTES = 32 * 1024

/** The opening of an entry's content (domain/entries.ts, opening()). */
export interface Opening {
  text: string
  cut: boolean
}

/**
 * An entry's content as a feed carries it: markup (a public feed's free entry), the text itself (plain text; all a
 * holder's feed carries), and whether it was cut short.
 */
export interface FeedBody {
  html?: string
  text?: string
  cut?: boolean
}

/** The media type without parameters, lowercase. */
export const baseType = (mimeType: string) => mimeType.split(';')[0]!.trim().toLowerCase()

/** Plain text as paragraphs (blank lines part them; a line break within one is kept), every character escaped. */
const paragraphs = (text: string): Html =>
  html`${text
    .split(/\r?\n[ \t]*\r?\n/)
    .map((p) => p.replace(/^\s+|\s+$/g, ''))
    .filter((p) => p !== '')
    .map((p) => new Html(`<p>${escapeHtml(p).replace(/\r?\n/g, '<br>')}</p>`))}`

/** JSON pretty-printed (as it came when it does not parse, or was cut), in a <pre>. */
function pretty(text: string, cut: boolean): Html {
  let shown = text
  if (!cut) {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2)
    } catch {}
  }
  return html`<pre>${shown}</pre>`
}

const RENDERED: Record<string, (text: string, cut: boolean) => Html> = {
  'text/markdown': renderMarkdown,
  'text/html': sanitizeMarkup,
  'text/plain': paragraphs,
  'application/json': pretty,
}

/** Whether a public feed carries a free entry of this type with its content. */
export const carriesBody = (mimeType: string): boolean => Object.hasOwn(RENDERED, baseType(mimeType))

/** A free entry's content as a public feed carries it (undefined for a type it does not carry). */
export function feedBody(mimeType: string, opening: Opening): FeedBody | undefined {
  const type = baseType(mimeType)
  if (!Object.hasOwn(RENDERED, type)) return undefined
  const markup = RENDERED[type]!(opening.text, opening.cut).text
  return { html: markup, ...(type === 'text/plain' ? { text: opening.text } : {}), cut: opening.cut }
}
