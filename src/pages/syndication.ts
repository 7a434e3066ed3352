// A feed as feed readers and podcast apps read it: RSS 2.0, Atom 1.0 and JSON Feed 1.1, made from the same facts.
// Free audio and video are enclosures (with their length and type), so a podcast app plays them; a paid entry is
// listed with its price and a link to its paywall page, never with its content or a link to its bytes.
import type { EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import { escapeHtml, html } from './html.ts'
import { mediaKind, usdc } from './format.ts'
import { creatorName, entryTitle } from './names.ts'

export interface SyndicationFacts {
  baseUrl: string
  network: string
  feed: FeedRecord
  creator: WalletRecord | null
  entries: { entry: EntryRecord; free: boolean }[]
  /** The latest change to the feed or any entry listed (Unix seconds). */
  updatedAt: number
}

export const FORMATS = {
  'feed.xml': 'application/rss+xml; charset=utf-8',
  'feed.atom': 'application/atom+xml; charset=utf-8',
  'feed.json': 'application/feed+json; charset=utf-8',
} as const
export type Format = keyof typeof FORMATS

/** Where each thing is, absolute (readers resolve nothing). */
function places(f: SyndicationFacts) {
  const feedPage = `${f.baseUrl}/feeds/${f.feed.id}`
  return {
    feedPage,
    self: (format: Format) => `${f.baseUrl}/v1/feeds/${f.feed.id}/${format}`,
    cover: f.feed.image_cid ? `${f.baseUrl}/v1/feeds/${f.feed.id}/image` : null,
    creatorPage: `${f.baseUrl}/creators/${f.feed.owner_wallet_address}`,
    entryPage: (e: EntryRecord) => `${feedPage}/entries/${e.id}`,
    bytes: (e: EntryRecord) => `${f.baseUrl}/v1/feeds/${f.feed.id}/entries/${e.id}/content`,
  }
}

/** The media type without parameters, as an enclosure names it. */
const baseType = (mimeType: string) => mimeType.split(';')[0]!.trim().toLowerCase()

/** Free audio and video are played from the feed; everything else is read on its page. */
const enclosed = (e: EntryRecord, free: boolean) => free && /^(audio|video)\//.test(baseType(e.mime_type))

/** What a reader shows for an entry: its description, and for a paid one what it costs and where to buy it. */
function summary(f: SyndicationFacts, e: EntryRecord, free: boolean, entryPage: string): string {
  const words = e.description ?? ''
  if (free) return words || `${mediaKind(e.mime_type)} entry`
  return `${words}${words ? '\n\n' : ''}Paid entry: ${usdc(e.price)} on ${f.network}. Buy it at ${entryPage}`
}

/**
 * RSS readers render `<description>` as HTML, while ours is plain text the creator wrote: escaped as HTML here (line
 * breaks kept as <br>), then as XML by the template, so a reader shows `<b>` as the characters, never as markup.
 */
const rssDescription = (text: string) => escapeHtml(text).replace(/\r?\n/g, '<br>')

const rfc822 = (seconds: number) => new Date(seconds * 1000).toUTCString()
const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')
const titled = (e: EntryRecord, free: boolean) => (free ? entryTitle(e) : `${entryTitle(e)} (${usdc(e.price)})`)

export function rssFeed(f: SyndicationFacts): string {
  const at = places(f)
  return `<?xml version="1.0" encoding="UTF-8"?>\n${
    html`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
<title>${f.feed.name}</title>
<link>${at.feedPage}</link>
<description>${rssDescription(f.feed.description ?? `Entries of ${f.feed.name}`)}</description>
<atom:link href="${at.self('feed.xml')}" rel="self" type="application/rss+xml"/>
<generator>Trellis</generator>
<lastBuildDate>${rfc822(f.updatedAt)}</lastBuildDate>
${at.cover ? html`<image><url>${at.cover}</url><title>${f.feed.name}</title><link>${at.feedPage}</link></image>` : ''}
${f.feed.tags.map((tag) => html`<category>${tag}</category>`)}
${f.entries.map(
  ({ entry: e, free }) => html`<item>
<title>${titled(e, free)}</title>
<link>${at.entryPage(e)}</link>
<guid isPermaLink="false">urn:uuid:${e.id}</guid>
<pubDate>${rfc822(e.created_at)}</pubDate>
<description>${rssDescription(summary(f, e, free, at.entryPage(e)))}</description>
${e.tags.map((tag) => html`<category>${tag}</category>`)}
${enclosed(e, free) ? html`<enclosure url="${at.bytes(e)}" length="${e.size}" type="${baseType(e.mime_type)}"/>` : ''}
</item>
`,
)}</channel>
</rss>
`.text
  }`
}

export function atomFeed(f: SyndicationFacts): string {
  const at = places(f)
  const author = f.creator ? creatorName(f.creator) : f.feed.owner_wallet_address
  return `<?xml version="1.0" encoding="UTF-8"?>\n${
    html`<feed xmlns="http://www.w3.org/2005/Atom">
<id>urn:uuid:${f.feed.id}</id>
<title>${f.feed.name}</title>
${f.feed.description ? html`<subtitle>${f.feed.description}</subtitle>` : ''}
<updated>${rfc3339(f.updatedAt)}</updated>
<link rel="self" type="application/atom+xml" href="${at.self('feed.atom')}"/>
<link rel="alternate" type="text/html" href="${at.feedPage}"/>
<author><name>${author}</name><uri>${at.creatorPage}</uri></author>
<generator>Trellis</generator>
${at.cover ? html`<logo>${at.cover}</logo>` : ''}
${f.feed.tags.map((tag) => html`<category term="${tag}"/>`)}
${f.entries.map(
  ({ entry: e, free }) => html`<entry>
<id>urn:uuid:${e.id}</id>
<title>${titled(e, free)}</title>
<updated>${rfc3339(e.updated_at)}</updated>
<published>${rfc3339(e.created_at)}</published>
<link rel="alternate" type="text/html" href="${at.entryPage(e)}"/>
${enclosed(e, free) ? html`<link rel="enclosure" type="${baseType(e.mime_type)}" length="${e.size}" href="${at.bytes(e)}"/>` : ''}
<summary>${summary(f, e, free, at.entryPage(e))}</summary>
${e.tags.map((tag) => html`<category term="${tag}"/>`)}
</entry>
`,
)}</feed>
`.text
  }`
}

export function jsonFeed(f: SyndicationFacts): string {
  const at = places(f)
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: f.feed.name,
    home_page_url: at.feedPage,
    feed_url: at.self('feed.json'),
    ...(f.feed.description ? { description: f.feed.description } : {}),
    ...(at.cover ? { icon: at.cover } : {}),
    authors: [{ name: f.creator ? creatorName(f.creator) : f.feed.owner_wallet_address, url: at.creatorPage }],
    items: f.entries.map(({ entry: e, free }) => ({
      id: e.id,
      url: at.entryPage(e),
      title: titled(e, free),
      content_text: summary(f, e, free, at.entryPage(e)),
      date_published: rfc3339(e.created_at),
      date_modified: rfc3339(e.updated_at),
      ...(e.tags.length ? { tags: e.tags } : {}),
      ...(enclosed(e, free) ? { attachments: [{ url: at.bytes(e), mime_type: baseType(e.mime_type), size_in_bytes: e.size }] } : {}),
      _trellis: { is_free: free, price: free ? '0' : e.price.toString(), asset: 'USDC', network: f.network, mime_type: e.mime_type },
    })),
  })
}

export const SYNDICATE: Record<Format, (f: SyndicationFacts) => string> = {
  'feed.xml': rssFeed,
  'feed.atom': atomFeed,
  'feed.json': jsonFeed,
}
