// What search indexes of a free entry's content (GET /v1/search): the text of text/plain, text/markdown, text/html
// and application/json entries, at most SEARCH_TEXT_CHARS of it. A paid entry's content is never read for it.
import { mediaTypeBase } from './media-type.ts'
import type { ContentKey, ContentStore } from '../content/store.ts'

/** Indexed text per entry: the first 64 Ki characters (a long text is found by its beginning). */
export const SEARCH_TEXT_CHARS = 64 * 1024
/** Bytes read of a text (4 per character at most in UTF-8) and of JSON (parsed whole: a bigger document is read as text). */
const TEXT_BYTES = 4 * SEARCH_TEXT_CHARS
const JSON_BYTES = 1024 * 1024

const SEARCHABLE = new Set(['text/plain', 'text/markdown', 'text/html', 'application/json'])

/** Whether an entry of this media type has text search reads. */
export const hasSearchText = (mimeType: string): boolean => SEARCHABLE.has(mediaTypeBase(mimeType) ?? '')

/** The bytes as text, in the charset the media type names (UTF-8 when it names none, or one TextDecoder lacks). */
function decode(bytes: Uint8Array, mimeType: string): string {
  const charset = /;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(mimeType)?.[1]
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes)
  } catch {
    return new TextDecoder('utf-8').decode(bytes)
  }
}

/** Elements that part words: a space is put where one starts (text of inline ones joins, as `<b>wor</b>ld`). */
const BLOCKS = 'p, div, br, li, dt, dd, tr, td, th, h1, h2, h3, h4, h5, h6, section, article, header, footer, blockquote, pre, hr'

/** An HTML document's text, as Bun's HTML parser (HTMLRewriter, lol-html) reads it: no tags, no scripts or styles. */
function htmlText(html: string): string {
  const parts: string[] = []
  let hidden = 0
  new HTMLRewriter()
    .on(BLOCKS, { element: () => void parts.push(' ') })
    .on('script, style, template, noscript', {
      element(element) {
        hidden++
        element.onEndTag(() => void hidden--)
      },
    })
    .onDocument({ text: (chunk) => void (hidden === 0 && parts.push(chunk.text)) })
    .transform(html)
  return parts.join('')
}

/** A JSON document's string values (not its keys, numbers or punctuation), or null when it is not JSON. */
function jsonText(text: string): string | null {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  const strings: string[] = []
  let length = 0
  const walk = (node: unknown): void => {
    if (length > SEARCH_TEXT_CHARS) return
    if (typeof node === 'string') strings.push(node), (length += node.length + 1)
    else if (Array.isArray(node)) for (const item of node) walk(item)
    else if (node && typeof node === 'object') for (const item of Object.values(node)) walk(item)
  }
  walk(value)
  return strings.join(' ')
}

/** The searchable text of content of this media type (its first bytes, as read), capped; '' when it has none. */
export function searchText(bytes: Uint8Array, mimeType: string): string {
  const base = mediaTypeBase(mimeType)
  if (!base || !SEARCHABLE.has(base)) return ''
  let text = decode(bytes, mimeType)
  if (base === 'text/html') text = htmlText(text)
  else if (base === 'application/json') text = (bytes.length < JSON_BYTES ? jsonText(text) : null) ?? text
  // PostgreSQL's text holds no NUL, and a cut may split a surrogate pair.
  return text.slice(0, SEARCH_TEXT_CHARS).replaceAll('\u0000', ' ').toWellFormed()
}

/** The searchable text of stored content (sealed under `key` when paid: opened here, for an entry that turned free). */
export async function storedSearchText(content: ContentStore, cid: string, mimeType: string, key: ContentKey | null): Promise<string> {
  if (!hasSearchText(mimeType)) return ''
  const base = mediaTypeBase(mimeType)
  const size = (await content.size(cid)) ?? 0
  const length = Math.min(size, base === 'application/json' ? JSON_BYTES : TEXT_BYTES)
  if (length === 0) return ''
  const pieces: Uint8Array[] = []
  for await (const piece of content.read(cid, { offset: 0, length }, key)) pieces.push(piece)
  return searchText(Buffer.concat(pieces), mimeType)
}
