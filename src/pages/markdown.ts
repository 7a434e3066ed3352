// Markdown as a page shows it: rendered by marked (CommonMark and GitHub's tables), then sanitized by sanitize-html
// to an allow-list of plain document markup. No raw HTML passes (its tags are dropped, its text kept), no script,
// no style, no event handler; links only to http, https and mailto (a javascript: link loses its href) and marked
// nofollow; no images (the pages fetch nothing from elsewhere, and the Content-Security-Policy would block them).
// An HTML entry shown outside its sandbox (in a public feed) passes the same allow-list.
import { Marked } from 'marked'
import sanitizeHtml from 'sanitize-html'
import { Html } from './html.ts'

const marked = new Marked({ gfm: true, breaks: false, async: false })

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'blockquote',
    'pre',
    'code',
    'em',
    'strong',
    'del',
    's',
    'ul',
    'ol',
    'li',
    'a',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
  ],
  allowedAttributes: { a: ['href', 'title'], ol: ['start'], th: ['align'], td: ['align'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow noopener noreferrer ugc' }) },
}
ALLOWED.allowedAttributes = { ...ALLOWED.allowedAttributes, a: ['href', 'title', 'rel'] }

/** A Markdown text as safe markup for a page. */
export function renderMarkdown(text: string): Html {
  return new Html(sanitizeHtml(marked.parse(text) as string, ALLOWED))
}

/** An HTML entry's markup kept to the same allow-list, for a feed reader (which shows it in no sandbox). */
export function sanitizeMarkup(markup: string): Html {
  return new Html(sanitizeHtml(markup, ALLOWED))
}
