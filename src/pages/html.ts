// HTML made from text we do not control: every value put into a template is escaped, unless it is Html already
// (made by this template, so escaped when it was made). Pages never build markup by concatenating strings.

/** Markup known to be safe: only `html` and `json` make it. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/**
 * Characters no XML document may hold (C0 controls but tab and line ends, U+FFFE/U+FFFF, unpaired surrogates):
 * dropped, so the same escaping serves HTML pages and XML feeds.
 */
const NOT_IN_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Text as it may stand between tags or inside a quoted attribute, in HTML or XML. */
export const escapeHtml = (text: string): string => text.replace(NOT_IN_XML, '').replace(/[&<>"']/g, (c) => ESCAPES[c]!)

type Value = Html | string | number | bigint | boolean | null | undefined | Value[]

function piece(value: Value): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(piece).join('')
  return escapeHtml(String(value))
}

/** The template with each value escaped (lists are joined; null, undefined and false leave nothing). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let text = strings[0]!
  for (let i = 0; i < values.length; i++) text += piece(values[i]!) + strings[i + 1]!
  return new Html(text)
}

/**
 * A value as JSON that may stand inside <script type="application/json">: nothing in it can close the element or
 * start a comment, and the line separators JavaScript once refused are escaped too.
 */
export const json = (value: unknown): Html =>
  new Html(JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))
