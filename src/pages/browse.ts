// Every active feed, as a reader browses them: newest, most bought or top earning first, narrowed to a category or a
// tag, a page at a time; the categories to choose from beside them.
import type { CategoryRecord } from '../models/records.ts'
import { html, type Html } from './html.ts'
import { page } from './layout.ts'
import { feedCards, type FeedCard } from './cards.ts'

export const BROWSE_SORTS = [
  ['newest', 'Newest'],
  ['popular', 'Most bought'],
  ['revenue', 'Top earning'],
] as const
export type BrowseSort = (typeof BROWSE_SORTS)[number][0]

export interface BrowseFacts {
  network: string
  /** Where this listing lives: /feeds, /categories/{id} or /tags/{tag}. */
  path: string
  title: string
  lead: string
  sort: BrowseSort
  feeds: FeedCard[]
  categories: CategoryRecord[]
  /** The category shown, if the listing is one's. */
  categoryId: string | null
  nextPageToken: string | null
  assetVersion: string
}

const withQuery = (path: string, query: Record<string, string | null>) => {
  const pairs = Object.entries(query).filter((pair): pair is [string, string] => pair[1] !== null)
  return pairs.length ? `${path}?${new URLSearchParams(pairs)}` : path
}

const sortLinks = (f: BrowseFacts): Html =>
  html`<nav class="sorts" aria-label="Order">${BROWSE_SORTS.map(([sort, label]) =>
    sort === f.sort
      ? html`<a class="button primary" aria-current="page" href="${withQuery(f.path, { sort })}">${label}</a>`
      : html`<a class="button" href="${withQuery(f.path, { sort: sort === 'newest' ? null : sort })}">${label}</a>`,
  )}</nav>`

export const categoryLinks = (categories: CategoryRecord[], current: string | null): Html =>
  categories.length
    ? html`<nav class="categories" aria-label="Categories"><ul>${categories.map(
        (c) => html`<li><a href="/categories/${c.id}"${c.id === current ? html` aria-current="page"` : ''}>${c.name}</a></li>`,
      )}</ul></nav>`
    : html``

export function browsePage(f: BrowseFacts): string {
  const more = f.nextPageToken ? withQuery(f.path, { sort: f.sort === 'newest' ? null : f.sort, page_token: f.nextPageToken }) : null
  return page(
    { title: f.title, network: f.network, description: f.lead, assetVersion: f.assetVersion },
    html`
<section class="intro">
  <h1>${f.title}</h1>
  <p>${f.lead}</p>
  ${sortLinks(f)}
</section>
${categoryLinks(f.categories, f.categoryId)}
${f.feeds.length ? feedCards(f.feeds) : html`<p class="empty">No feeds here yet.</p>`}
${more ? html`<p class="more"><a class="button" href="${more}" rel="next">More feeds</a></p>` : ''}`,
  )
}
