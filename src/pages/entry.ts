// An entry the reader may read (free, or theirs): the facts and the content itself, each type in its own element.
// Text is never put into the page by the server: the script fetches it and sets it as text.
import type { EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import { html, type Html } from './html.ts'
import { page } from './layout.ts'
import { tagList } from './cards.ts'
import { day, mediaKind, usdc } from './format.ts'
import { entryTitle } from './names.ts'
import { creatorLink } from './paywall.ts'
import { entryCard } from './feed.ts'

export interface EntryFacts {
  network: string
  origin: string
  feed: FeedRecord
  entry: EntryRecord
  creator: WalletRecord | null
  free: boolean
  /** Where the bytes are read from (the content URL, or a signed link for a paid entry). */
  contentUrl: string
  /** A Markdown entry, rendered and sanitized (markdown.ts); absent for other types, or one too long to show here. */
  rendered?: Html
  assetVersion: string
}

export function entryPage(f: EntryFacts): string {
  const title = entryTitle(f.entry)
  const published = day(f.entry.created_at)
  return page(
    {
      title,
      network: f.network,
      description: f.entry.description ?? undefined,
      assetVersion: f.assetVersion,
      origin: f.origin,
      card: entryCard(f.feed, f.entry),
    },
    html`
<article class="entry">
  <p class="kicker">${mediaKind(f.entry.mime_type)} · ${f.free ? 'free' : usdc(f.entry.price)}</p>
  <h1>${title}</h1>
  <p class="byline">in <a href="/feeds/${f.feed.id}">${f.feed.name}</a> by ${creatorLink(f.feed, f.creator)} · ${published}</p>
  ${f.entry.description ? html`<p class="description">${f.entry.description}</p>` : ''}
  ${tagList(f.entry.tags)}
  <div class="shown">${f.rendered ? prose(f.rendered, f.contentUrl, title) : contentView(f.entry.mime_type, f.contentUrl, title)}</div>
</article>`,
  )
}

const downloadLink = (url: string, title: string) => html`<a class="download" href="${url}" download="${title}">Download</a>`

const prose = (rendered: Html, url: string, title: string): Html =>
  html`<div class="content prose">${rendered}</div>${downloadLink(url, title)}`

/**
 * Each type in the element made for it. Text is fetched by the script and set as text (never parsed as markup); an
 * HTML entry is shown in a sandboxed frame (no script, an origin of its own; its bytes carry a sandbox CSP too).
 */
function contentView(mimeType: string, url: string, title: string): Html {
  const type = mimeType.toLowerCase()
  const download = downloadLink(url, title)
  if (type.startsWith('image/')) return html`<img class="content" src="${url}" alt="${title}">${download}`
  if (type.startsWith('audio/')) return html`<audio class="content" controls preload="metadata" src="${url}"></audio>${download}`
  if (type.startsWith('video/')) return html`<video class="content" controls preload="metadata" src="${url}"></video>${download}`
  if (type.startsWith('text/html'))
    return html`<iframe class="content framed" sandbox="" src="${url}" title="${title}" loading="lazy"></iframe>${download}`
  if (type.startsWith('application/pdf'))
    return html`<iframe class="content framed" src="${url}" title="${title}" loading="lazy"></iframe>${download}`
  const json = /^application\/([\w.+-]*\+)?json/.test(type)
  if (json) return html`<pre class="content" data-text-src="${url}" data-json="1">Loading…</pre>${download}`
  if (type.startsWith('text/')) return html`<div class="content text" data-text-src="${url}" data-json="0">Loading…</div>${download}`
  return html`<a class="button primary" href="${url}">Open the content</a>${download}`
}
