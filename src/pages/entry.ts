// An entry the reader may read (free, or theirs): the facts and the content itself, each type in its own element.
// Text is never put into the page by the server: the script fetches it and sets it as text.
import type { EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import { html, type Html } from './html.ts'
import { page } from './layout.ts'
import { tagList } from './cards.ts'
import { day, mediaKind, usdc } from './format.ts'
import { entryTitle } from './names.ts'
import { creatorLink } from './paywall.ts'
import { coverOf } from './feed.ts'

export interface EntryFacts {
  network: string
  origin: string
  feed: FeedRecord
  entry: EntryRecord
  creator: WalletRecord | null
  free: boolean
  /** Where the bytes are read from (the content URL, or a signed link for a paid entry). */
  contentUrl: string
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
      card: {
        type: 'article',
        path: `/feeds/${f.feed.id}/entries/${f.entry.id}`,
        description: f.entry.description ?? undefined,
        image: coverOf(f.feed),
      },
    },
    html`
<article class="entry">
  <p class="kicker">${mediaKind(f.entry.mime_type)} · ${f.free ? 'free' : usdc(f.entry.price)}</p>
  <h1>${title}</h1>
  <p class="byline">in <a href="/feeds/${f.feed.id}">${f.feed.name}</a> by ${creatorLink(f.feed, f.creator)} · ${published}</p>
  ${f.entry.description ? html`<p class="description">${f.entry.description}</p>` : ''}
  ${tagList(f.entry.tags)}
  <div class="shown">${contentView(f.entry.mime_type, f.contentUrl, title)}</div>
</article>`,
  )
}

function contentView(mimeType: string, url: string, title: string): Html {
  const type = mimeType.toLowerCase()
  const download = html`<a class="download" href="${url}" download="${title}">Download</a>`
  if (type.startsWith('image/')) return html`<img class="content" src="${url}" alt="${title}">${download}`
  if (type.startsWith('audio/')) return html`<audio class="content" controls preload="metadata" src="${url}"></audio>${download}`
  if (type.startsWith('video/')) return html`<video class="content" controls preload="metadata" src="${url}"></video>${download}`
  const json = /^application\/([\w.+-]*\+)?json/.test(type)
  if (json || (type.startsWith('text/') && !type.startsWith('text/html'))) {
    return html`<pre class="content" data-text-src="${url}" data-json="${json ? '1' : '0'}">Loading…</pre>${download}`
  }
  return html`<a class="button primary" href="${url}">Open the content</a>${download}`
}
