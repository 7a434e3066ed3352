// The search page: what was asked, and the feeds and entries that hold its words, the most relevant first, each with
// where the words are (a snippet of the public text only, its matches marked; every piece escaped as text).
import type { SearchItem } from '../domain/search.ts'
import { MARK_END, MARK_START } from '../models/search.ts'
import { html, type Html } from './html.ts'
import { page } from './layout.ts'
import { tagList } from './cards.ts'
import { mediaKind, usdc } from './format.ts'
import { entryTitle } from './names.ts'

export interface SearchFacts {
  network: string
  q: string
  items: SearchItem[]
  nextPageToken: string | null
  assetVersion: string
}

/** A snippet with its marked words in <mark>, every piece escaped. */
export function marked(snippet: string): Html {
  const pieces: Html[] = []
  let rest = snippet
  for (;;) {
    const start = rest.indexOf(MARK_START)
    const end = start < 0 ? -1 : rest.indexOf(MARK_END, start + 1)
    if (end < 0) return html`${pieces}${rest}`
    pieces.push(html`${rest.slice(0, start)}<mark>${rest.slice(start + 1, end)}</mark>`)
    rest = rest.slice(end + 1)
  }
}

function hit(item: SearchItem): Html {
  const { feed, entry } = item
  const snippet = item.snippet ? html`<p class="snippet">${marked(item.snippet)}</p>` : ''
  if (!entry) {
    const title = html`<h2><a href="/feeds/${feed.id}">${feed.name}</a></h2>`
    return html`<li class="hit"><p class="kicker">Feed</p>${title}${snippet}${tagList(feed.tags)}</li>`
  }
  const price = entry.is_free ? 'free' : usdc(entry.price)
  return html`<li class="hit"><p class="kicker">${mediaKind(entry.mime_type)} · ${price}</p>
  <h2><a href="/feeds/${feed.id}/entries/${entry.id}">${entryTitle(entry)}</a></h2>
  <p class="muted">in <a href="/feeds/${feed.id}">${feed.name}</a></p>${snippet}</li>`
}

export function searchPage(f: SearchFacts): string {
  const more = f.nextPageToken ? `/search?${new URLSearchParams({ q: f.q, page_token: f.nextPageToken })}` : null
  return page(
    { title: f.q ? `Search: ${f.q}` : 'Search', network: f.network, assetVersion: f.assetVersion },
    html`
<section class="intro">
  <h1>${f.q ? html`Results for “${f.q}”` : 'Search'}</h1>
  <p>Feed names, descriptions and tags; entry titles, descriptions and tags; the text of free entries.</p>
</section>
${
  f.q
    ? f.items.length
      ? html`<ul class="hits">${f.items.map(hit)}</ul>`
      : html`<p class="empty">Nothing holds every word of “${f.q}”.</p>`
    : ''
}
${more ? html`<p class="more"><a class="button" href="${more}" rel="next">More results</a></p>` : ''}`,
  )
}
