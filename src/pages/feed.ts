// A feed's page: its cover, description and creator, and its entries with what each costs.
import type { CategoryRecord, EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import { html, type Html } from './html.ts'
import { page, type Card } from './layout.ts'
import { figures, tagList } from './cards.ts'
import { count, day, mediaKind, usdc } from './format.ts'
import { entryTitle } from './names.ts'
import { creatorLink } from './paywall.ts'
import { passOffer } from './pass.ts'

export interface FeedFacts {
  network: string
  /** The public origin, for the shared card. */
  origin: string
  feed: FeedRecord
  creator: WalletRecord | null
  category: CategoryRecord | null
  entries: { entry: EntryRecord; free: boolean }[]
  /** The next page of entries, when there is one. */
  nextPageToken: string | null
  assetVersion: string
  /** The reader signed in, when the page is made for one: what is theirs. */
  viewer?: Viewer
}

export interface Viewer {
  /** The feed is theirs: they read everything. */
  owner: boolean
  /** When their pass to the feed ends, while one runs. */
  passUntil: number | null
  /** The paid entries listed that they bought. */
  owned: Set<string>
}

/** The feeds a reader's app follows this feed by: a title, a media type, a path. */
export const followLinks = (feedId: string): [string, string, string][] => [
  ['RSS', 'application/rss+xml', `/v1/feeds/${feedId}/feed.xml`],
  ['Atom', 'application/atom+xml', `/v1/feeds/${feedId}/feed.atom`],
  ['JSON Feed', 'application/feed+json', `/v1/feeds/${feedId}/feed.json`],
]

/** How an entry's page is shown when shared: the entry, with its feed's cover. */
export const entryCard = (feed: FeedRecord, entry: EntryRecord): Card => ({
  type: 'article',
  path: `/feeds/${feed.id}/entries/${entry.id}`,
  description: entry.description ?? undefined,
  image: coverOf(feed),
})

/** A feed's cover, as a path, when it has one. */
export const coverOf = (feed: FeedRecord): string | undefined => (feed.image_cid ? `/v1/feeds/${feed.id}/image` : undefined)

export function feedPage(f: FeedFacts): string {
  const { feed } = f
  /** How a paid entry is the signed-in reader's: theirs as the owner, by a pass, bought; or not theirs (''). */
  const theirs = (id: string): string =>
    !f.viewer ? '' : f.viewer.owner ? 'Yours' : f.viewer.passUntil ? 'Pass' : f.viewer.owned.has(id) ? 'Owned' : ''
  const priceCell = (entry: EntryRecord, free: boolean): Html => {
    if (free) return html`<span class="badge free">Free</span>`
    return theirs(entry.id) ? html`<span class="badge owned">${theirs(entry.id)}</span>` : html`${usdc(entry.price)}`
  }
  const action = (entry: EntryRecord, free: boolean, href: string): Html =>
    free || theirs(entry.id) ? html`<a class="button" href="${href}">Read</a>` : html`<a class="button primary" href="${href}">Buy</a>`
  const older = f.nextPageToken ? `/feeds/${feed.id}?page_token=${encodeURIComponent(f.nextPageToken)}` : null
  return page(
    {
      title: feed.name,
      network: f.network,
      description: feed.description ?? undefined,
      assetVersion: f.assetVersion,
      origin: f.origin,
      card: { type: 'website', path: `/feeds/${feed.id}`, description: feed.description ?? undefined, image: coverOf(feed) },
      alternates: followLinks(feed.id).map(([title, type, href]) => ({ title: `${feed.name} (${title})`, type, href })),
    },
    html`
<section class="feed-head">
  <div class="cover">${feed.image_cid ? html`<img src="/v1/feeds/${feed.id}/image" alt="Cover of ${feed.name}">` : ''}</div>
  <div>
    <p class="kicker">Feed${feed.is_active ? '' : ' · deleted'}</p>
    <h1>${feed.name}</h1>
    <p class="byline">by ${creatorLink(feed, f.creator)} · since ${day(feed.created_at)}${
      f.category ? html` · in <a href="/categories/${f.category.id}">${f.category.name}</a>` : ''
    }</p>
    ${feed.description ? html`<p class="description">${feed.description}</p>` : ''}
    ${tagList(feed.tags)}
    <p class="follow">Follow: ${followLinks(feed.id).map(
      ([title, type, href], i) => html`${i ? ' · ' : ''}<a href="${href}" type="${type}">${title}</a>`,
    )}</p>
    ${figures([
      ['entries', count(feed.total_entries)],
      ['purchases', count(feed.total_purchases)],
      ['earned', usdc(feed.total_revenue)],
    ])}
  </div>
</section>
${passOffer(feed, f.viewer?.passUntil ?? null)}
<h2>Entries</h2>
${
  f.entries.length
    ? html`<table class="entries">
  <thead><tr><th>Entry</th><th>Type</th><th>Published</th><th class="num">Price</th><th></th></tr></thead>
  <tbody>${f.entries.map(({ entry, free }) => {
    const href = `/feeds/${feed.id}/entries/${entry.id}`
    const description = entry.description ? html`<div class="muted">${entry.description}</div>` : ''
    return html`<tr>
    <td><a class="title" href="${href}">${entryTitle(entry)}</a>${description}</td>
    <td>${mediaKind(entry.mime_type)}</td>
    <td>${day(entry.created_at)}</td>
    <td class="num">${priceCell(entry, free)}</td>
    <td class="num">${action(entry, free, href)}</td>
  </tr>`
  })}</tbody>
</table>`
    : html`<p class="empty">No entries yet.</p>`
}
${older ? html`<p class="more"><a class="button" href="${older}">Older entries</a></p>` : ''}`,
  )
}
