// /v1/feeds/{feed_id}/feed.xml, .atom, .json: a feed for readers and podcast apps (pages/syndication.ts), kept in the
// read memo until the feed or its entries change, answered 304 to a reader that has it (ETag or Last-Modified). Each
// is a WebSub topic: the document and its Link header name the hub (routes/websub.ts) and the topic itself.
// Free text, Markdown, HTML and JSON entries carry their content (its first FEED_BODY_BYTES), rendered and sanitized
// once per content and kept by its CID (bodies below), so a feed made again after a write reads and renders nothing.
import { keptPromises, type KeptPromises } from '../lib/kept-promises.ts'
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import type { EntryRecord } from '../models/records.ts'
import { DomainError } from '../domain/errors.ts'
import { uuid } from './params.ts'
import { FORMATS, type Format } from '../pages/syndication.ts'
import { baseType, carriesBody, FEED_BODY_BYTES, type FeedBody, feedBody } from '../pages/feed-bodies.ts'
import { hubUrl, topicLinks } from '../domain/websub-topics.ts'
import { type Document, DESCRIPTIONS, documentRoutes, documentWeight, gather, render } from './feed-documents.ts'

const CACHE_CONTROL = 'public, max-age=60'
/** About how many characters of rendered bodies are kept (the least recently read make room). */
const BODIES_MAX_CHARS = 8 * 1024 * 1024

/**
 * Free entries' bodies as the feeds carry them, by CID and type, for each app. Content never changes under its CID,
 * so a body kept is never stale: unlike the read memo (emptied by any write), this outlives writes, and three formats
 * read one.
 */
const bodiesOf = new WeakMap<Services, KeptPromises<FeedBody | undefined>>()

/** A free entry's body as the public feeds carry it (undefined for a paid one, or a type they do not carry). */
function freeBody(s: Services, entry: EntryRecord, free: boolean): Promise<FeedBody | undefined> {
  if (!free || !carriesBody(entry.mime_type)) return Promise.resolve(undefined)
  let bodies = bodiesOf.get(s)
  if (!bodies) bodiesOf.set(s, (bodies = keptPromises(BODIES_MAX_CHARS)))
  return bodies.get(
    `${entry.cid} ${baseType(entry.mime_type)}`,
    () => s.entries.opening(entry, FEED_BODY_BYTES).then((opening) => (opening ? feedBody(entry.mime_type, opening) : undefined)),
    (made) => (made ? (made.html?.length ?? 0) + (made.text?.length ?? 0) : undefined),
  )
}

/** The feed as it stands now, read from the records (WebSub's distribution renders with this, outside the memo). */
export async function renderDocument(
  s: Services,
  feedId: string,
  format: Format,
  staleFrom: (at: number) => void = () => {},
): Promise<Document> {
  const feed = await s.feeds.get(feedId)
  if (!feed.is_active) throw new DomainError('FEED_NOT_FOUND', 'feed not found')
  const facts = await gather(s, feed, (entry, free) => freeBody(s, entry, free), staleFrom)
  return render({ ...facts, hub: hubUrl(s.publicUrl()) }, format)
}

/** A topic's document for WebSub's distribution (domain/websub-distribution.ts): its bytes and media type. */
export const renderTopic = async (s: Services, feedId: string, format: Format) => ({
  body: (await renderDocument(s, feedId, format)).body,
  type: FORMATS[format],
})

function document(s: Services, rawId: string, format: Format): Promise<Document> {
  const feedId = uuid(rawId, 'feed_id')
  return s.cached.get<Document>(
    `syndication:${format}:${feedId}`,
    (staleFrom) => renderDocument(s, feedId, format, staleFrom),
    documentWeight,
  )
}

export const syndicationRoutes = (s: Services) =>
  documentRoutes(new Elysia({ prefix: '/v1/feeds/:feed_id', tags: ['Feeds'] }), {
    path: (format) => `/${format}`,
    read: async (params, format) => ({
      document: await document(s, params.feed_id!, format),
      headers: { 'cache-control': CACHE_CONTROL, link: topicLinks(s.publicUrl(), params.feed_id!.toLowerCase(), format) },
    }),
    ok: (format) => `The feed as ${DESCRIPTIONS[format]}: its 50 newest entries`,
    refusals: [400, 404],
    summary: (format) => `The feed as ${DESCRIPTIONS[format]}`,
    description:
      'For feed readers and podcast apps: free plain text, Markdown, HTML and JSON with their content (its first ' +
      '32 KiB) as sanitized HTML; free audio, video and images as enclosures (length and type); a paid entry with ' +
      'its price and a link to its paywall page, never its content. Answers 304 to a reader that has this version. ' +
      'A WebSub topic: the document and its Link header name the hub (POST /v1/websub) and the topic URL (rel="self").',
  })
