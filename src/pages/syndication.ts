// A feed as feed readers and podcast apps read it: RSS 2.0, Atom 1.0 and JSON Feed 1.1, made from the same facts.
// Free text, Markdown, HTML and JSON carry their content as safe HTML (feed-bodies.ts); free audio, video and images
// are enclosures (with their length and type), so a podcast app plays them; a paid entry is listed with its price and
// a link to its paywall page, never with its content or a link to its bytes. An entry without a description has
// none (no stand-in words). A pass holder's private feed (routes/pass-feeds.ts) is made from the same facts, with
// every entry the reader's.
import type { EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import { escapeHtml, html } from './html.ts'
import { usdc } from './format.ts'
import { creatorName, entryTitle } from './names.ts'
import { baseType, type FeedBody } from './feed-bodies.ts'

export interface SyndicationFacts {
  baseUrl: string
  network: string
  feed: FeedRecord
  creator: WalletRecord | null
  /**
   * `body`: the entry's content, inline: a free one's as safe HTML in a public feed (feed-bodies.ts; never a paid
   * one's), and in a holder's feed the text of plain text, Markdown and JSON of a moderate size, as text.
   */
  entries: { entry: EntryRecord; free: boolean; body?: FeedBody }[]
  /** The latest change to the feed or any entry listed (Unix seconds). */
  updatedAt: number
  /**
   * A pass holder's private feed: its own address in each format, and each entry's bytes at an address whose token
   * opens them with no signature. Every entry is the reader's: no price, no paywall; what is not inline is enclosed.
   */
  holder?: { self: (format: Format) => string; bytes: (e: EntryRecord) => string }
  /** The WebSub hub a public feed names (routes/websub.ts), so a reader subscribes instead of polling. */
  hub?: string
}

export const FORMATS = {
  'feed.xml': 'application/rss+xml; charset=utf-8',
  'feed.atom': 'application/atom+xml; charset=utf-8',
  'feed.json': 'application/feed+json; charset=utf-8',
} as const
export type Format = keyof typeof FORMATS

type Places = ReturnType<typeof places>

/** Where each thing is, absolute (readers resolve nothing). */
function places(f: SyndicationFacts) {
  const feedPage = `${f.baseUrl}/feeds/${f.feed.id}`
  return {
    feedPage,
    self: f.holder?.self ?? ((format: Format) => `${f.baseUrl}/v1/feeds/${f.feed.id}/${format}`),
    cover: f.feed.image_cid ? `${f.baseUrl}/v1/feeds/${f.feed.id}/image` : null,
    creatorPage: `${f.baseUrl}/creators/${f.feed.owner_wallet_address}`,
    entryPage: (e: EntryRecord) => `${feedPage}/entries/${e.id}`,
    bytes: f.holder?.bytes ?? ((e: EntryRecord) => `${f.baseUrl}/v1/feeds/${f.feed.id}/entries/${e.id}/content`),
  }
}

type Item = SyndicationFacts['entries'][number]

/** Whether the reader has the entry: free, or the feed is a holder's. */
const readable = (f: SyndicationFacts, free: boolean) => free || f.holder !== undefined

/**
 * Free audio, video and images are played and shown from the feed; free text is carried; the rest is read on its
 * page. A holder's feed encloses whatever it does not carry inline (media, HTML, a long text).
 */
const enclosed = (f: SyndicationFacts, { entry: e, free, body }: Item) =>
  f.holder ? body === undefined : free && /^(audio|video|image)\//.test(baseType(e.mime_type))

/** The content the feed carries: a readable entry's only. A cut one ends with a link to the rest, on its page. */
function carried(f: SyndicationFacts, { free, body }: Item, entryPage: string): FeedBody | undefined {
  if (body === undefined || !readable(f, free)) return undefined
  if (!body.cut) return body
  return {
    ...(body.html === undefined ? {} : { html: `${body.html}${html`<p><a href="${entryPage}">The rest is on its page</a></p>`}` }),
    ...(body.text === undefined ? {} : { text: `${body.text}…\n\nThe rest is on its page: ${entryPage}` }),
  }
}

/** What a reader shows for an entry: its description (or nothing), and for a paid one its price and where to buy it. */
function summary(f: SyndicationFacts, e: EntryRecord, free: boolean, entryPage: string): string {
  const words = e.description ?? ''
  if (readable(f, free)) return words
  return `${words}${words ? '\n\n' : ''}Paid entry: ${usdc(e.price)} on ${f.network}. Buy it at ${entryPage}`
}

/**
 * RSS readers render `<description>` as HTML, while ours is plain text the creator wrote: escaped as HTML here (line
 * breaks kept as <br>), then as XML by the template, so a reader shows `<b>` as the characters, never as markup.
 */
const rssDescription = (text: string) => escapeHtml(text).replace(/\r?\n/g, '<br>')

const rfc822 = (seconds: number) => new Date(seconds * 1000).toUTCString()
const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')
const titled = (f: SyndicationFacts, e: EntryRecord, free: boolean) =>
  readable(f, free) ? entryTitle(e) : `${entryTitle(e)} (${usdc(e.price)})`

/** The content module (content:encoded), and for a holder's RSS iTunes' block, keeping it out of podcast directories. */
const CONTENT_NAMESPACE = html`${' '}xmlns:content="http://purl.org/rss/1.0/modules/content/"`
const HOLDER_NAMESPACES = html`${' '}xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"`

export function rssFeed(f: SyndicationFacts): string {
  const at = places(f)
  return `<?xml version="1.0" encoding="UTF-8"?>\n${
    html`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"${CONTENT_NAMESPACE}${f.holder ? HOLDER_NAMESPACES : ''}>
<channel>
<title>${f.feed.name}</title>
<link>${at.feedPage}</link>
<description>${rssDescription(f.feed.description ?? `Entries of ${f.feed.name}`)}</description>
<atom:link href="${at.self('feed.xml')}" rel="self" type="application/rss+xml"/>
${f.hub ? html`<atom:link href="${f.hub}" rel="hub"/>` : ''}
<generator>Trellis</generator>
${f.holder ? html`<itunes:block>Yes</itunes:block>` : ''}
<lastBuildDate>${rfc822(f.updatedAt)}</lastBuildDate>
${at.cover ? html`<image><url>${at.cover}</url><title>${f.feed.name}</title><link>${at.feedPage}</link></image>` : ''}
${f.feed.tags.map((tag) => html`<category>${tag}</category>`)}
${f.entries.map((item) => rssItem(f, at, item))}</channel>
</rss>
`.text
  }`
}

function rssItem(f: SyndicationFacts, at: Places, item: Item) {
  const { entry: e, free } = item
  const said = summary(f, e, free, at.entryPage(e))
  const body = carried(f, item, at.entryPage(e))
  const encoded = body?.html ?? (body?.text === undefined ? undefined : rssDescription(body.text))
  return html`<item>
<title>${titled(f, e, free)}</title>
<link>${at.entryPage(e)}</link>
<guid isPermaLink="false">urn:uuid:${e.id}</guid>
<pubDate>${rfc822(e.created_at)}</pubDate>
${said ? html`<description>${rssDescription(said)}</description>` : ''}
${encoded === undefined ? '' : html`<content:encoded>${encoded}</content:encoded>`}
${e.tags.map((tag) => html`<category>${tag}</category>`)}
${enclosed(f, item) ? html`<enclosure url="${at.bytes(e)}" length="${e.size}" type="${baseType(e.mime_type)}"/>` : ''}
</item>
`
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
${f.hub ? html`<link rel="hub" href="${f.hub}"/>` : ''}
<link rel="alternate" type="text/html" href="${at.feedPage}"/>
<author><name>${author}</name><uri>${at.creatorPage}</uri></author>
<generator>Trellis</generator>
${at.cover ? html`<logo>${at.cover}</logo>` : ''}
${f.feed.tags.map((tag) => html`<category term="${tag}"/>`)}
${f.entries.map((item) => atomEntry(f, at, item))}</feed>
`.text
  }`
}

function atomEntry(f: SyndicationFacts, at: Places, item: Item) {
  const { entry: e, free } = item
  const said = summary(f, e, free, at.entryPage(e))
  const body = carried(f, item, at.entryPage(e))
  return html`<entry>
<id>urn:uuid:${e.id}</id>
<title>${titled(f, e, free)}</title>
<updated>${rfc3339(e.updated_at)}</updated>
<published>${rfc3339(e.created_at)}</published>
<link rel="alternate" type="text/html" href="${at.entryPage(e)}"/>
${enclosed(f, item) ? html`<link rel="enclosure" type="${baseType(e.mime_type)}" length="${e.size}" href="${at.bytes(e)}"/>` : ''}
${said ? html`<summary>${said}</summary>` : ''}
${atomContent(body)}
${e.tags.map((tag) => html`<category term="${tag}"/>`)}
</entry>
`
}

/** Atom's content: the markup as HTML (escaped once more by XML), else the text as text. */
const atomContent = (body: FeedBody | undefined) => {
  if (body?.html !== undefined) return html`<content type="html">${body.html}</content>`
  return body?.text === undefined ? '' : html`<content type="text">${body.text}</content>`
}

/** JSON Feed's content: the markup and the text; an item must have one, so without either its description or title. */
function jsonContent(f: SyndicationFacts, e: EntryRecord, free: boolean, said: string, body: FeedBody | undefined) {
  if (body === undefined) return { content_text: said || titled(f, e, free) }
  return {
    ...(body.html === undefined ? {} : { content_html: body.html }),
    ...(body.text === undefined ? {} : { content_text: body.text }),
    ...(said ? { summary: said } : {}),
  }
}

export function jsonFeed(f: SyndicationFacts): string {
  const at = places(f)
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: f.feed.name,
    home_page_url: at.feedPage,
    feed_url: at.self('feed.json'),
    ...(f.hub ? { hubs: [{ type: 'WebSub', url: f.hub }] } : {}),
    ...(f.feed.description ? { description: f.feed.description } : {}),
    ...(at.cover ? { icon: at.cover } : {}),
    authors: [{ name: f.creator ? creatorName(f.creator) : f.feed.owner_wallet_address, url: at.creatorPage }],
    items: f.entries.map((item) => {
      const { entry: e, free } = item
      const said = summary(f, e, free, at.entryPage(e))
      const attached = enclosed(f, item)
      return {
        id: e.id,
        url: at.entryPage(e),
        title: titled(f, e, free),
        ...jsonContent(f, e, free, said, carried(f, item, at.entryPage(e))),
        ...(attached && baseType(e.mime_type).startsWith('image/') ? { image: at.bytes(e) } : {}),
        date_published: rfc3339(e.created_at),
        date_modified: rfc3339(e.updated_at),
        ...(e.tags.length ? { tags: e.tags } : {}),
        ...(attached ? { attachments: [{ url: at.bytes(e), mime_type: baseType(e.mime_type), size_in_bytes: e.size }] } : {}),
        _trellis: { is_free: free, price: free ? '0' : e.price.toString(), asset: 'USDC', network: f.network, mime_type: e.mime_type },
      }
    }),
  })
}

export const SYNDICATE: Record<Format, (f: SyndicationFacts) => string> = {
  'feed.xml': rssFeed,
  'feed.atom': atomFeed,
  'feed.json': jsonFeed,
}
