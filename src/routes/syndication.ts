// /v1/feeds/{feed_id}/feed.xml, .atom, .json: a feed for readers and podcast apps (pages/syndication.ts), kept in the
// read memo until the feed or its entries change, answered 304 to a reader that has it (ETag or Last-Modified). Each
// is a WebSub topic: the document and its Link header name the hub (routes/websub.ts) and the topic itself.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import { DomainError } from '../domain/errors.ts'
import { isFreeNow } from '../domain/entries.ts'
import { nowSeconds } from '../lib/clock.ts'
import { uuid } from './params.ts'
import { matchesEtag } from './serve-content.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { FORMATS, SYNDICATE, type Format } from '../pages/syndication.ts'
import { hubUrl, topicLinks } from '../domain/websub-topics.ts'

const LISTED_ENTRIES = 50
const CACHE_CONTROL = 'public, max-age=60'

export interface Document {
  body: string
  etag: string
  lastModified: string
}

export const DESCRIPTIONS: Record<Format, string> = {
  'feed.xml': 'RSS 2.0',
  'feed.atom': 'Atom 1.0',
  'feed.json': 'JSON Feed 1.1',
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
  const now = nowSeconds()
  const rows = await s.entries.list({ feedId, limit: LISTED_ENTRIES })
  for (const e of rows) if (!isFreeNow(e, now) && e.expires_at !== null) staleFrom(e.expires_at)
  const creator = await s.wallets.byAddress(feed.owner_wallet_address).catch(() => null)
  const updatedAt = Math.max(feed.updated_at, ...rows.map((e) => e.updated_at))
  const body = SYNDICATE[format]({
    baseUrl: s.publicUrl(),
    network: s.config.network.name,
    feed,
    creator,
    entries: rows.map((entry) => ({ entry, free: isFreeNow(entry, now) })),
    updatedAt,
    hub: hubUrl(s.publicUrl()),
  })
  return { body, etag: `"${Bun.hash(body).toString(36)}"`, lastModified: new Date(updatedAt * 1000).toUTCString() }
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
    (d) => 2 * d.body.length,
  )
}

/** 304 when the reader has this version: by ETag, or (without one) by a date no older than the last change. */
export function unchanged(request: Request, d: Document): boolean {
  const etags = request.headers.get('if-none-match')
  if (etags !== null) return matchesEtag(etags, d.etag)
  const since = Date.parse(request.headers.get('if-modified-since') ?? '')
  return Number.isFinite(since) && since >= Date.parse(d.lastModified)
}

export const syndicationRoutes = (s: Services) => {
  const app = new Elysia({ prefix: '/v1/feeds/:feed_id', tags: ['Feeds'] })
  for (const format of Object.keys(FORMATS) as Format[]) {
    app.get(
      `/${format}`,
      async ({ params, request }) => {
        const d = await document(s, params.feed_id, format)
        const headers = {
          'content-type': FORMATS[format],
          etag: d.etag,
          'last-modified': d.lastModified,
          'cache-control': CACHE_CONTROL,
          link: topicLinks(s.publicUrl(), params.feed_id.toLowerCase(), format),
        }
        return unchanged(request, d) ? new Response(null, { status: 304, headers }) : new Response(d.body, { headers })
      },
      {
        response: {
          200: t.String({
            format: 'binary',
            'x-media-type': FORMATS[format].split(';')[0],
            description: `The feed as ${DESCRIPTIONS[format]}: its 50 newest entries`,
          }),
          304: NoBody('not modified (If-None-Match or If-Modified-Since)'),
          ...errors(400, 404),
        },
        detail: {
          summary: `The feed as ${DESCRIPTIONS[format]}`,
          description:
            'For feed readers and podcast apps: free audio and video as enclosures (length and type); a ' +
            'paid entry with its price and a link to its paywall page, never its content. Answers 304 to a ' +
            'reader that has this version. A WebSub topic: the document and its Link header name the hub ' +
            '(POST /v1/websub) and the topic URL (rel="self").',
        },
      },
    )
  }
  return app
}
