// What the public feeds (routes/syndication.ts) and a pass holder's private ones (routes/pass-feeds.ts) share: the
// facts a document is made from (the 50 newest entries, each with the content the feed carries), the document with
// its validators, and its routes: one per format, answering 304 to a reader that has the current version.
import { soldOnNames } from '../config.ts'
import { type Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import { isFreeNow } from '../domain/entries.ts'
import { nowSeconds } from '../lib/clock.ts'
import { matchesEtag } from './serve-content.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { FORMATS, SYNDICATE, type Format, type SyndicationFacts } from '../pages/syndication.ts'
import type { FeedBody } from '../pages/feed-bodies.ts'

export const LISTED_ENTRIES = 50

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

/** What a feed says of itself and its entries; the caller adds whose it is (the holder's, or the hub's). */
type Gathered = Pick<SyndicationFacts, 'baseUrl' | 'network' | 'feed' | 'creator' | 'entries' | 'updatedAt'>

/**
 * The feed's newest entries with the content the feed carries of each (`bodyOf`: undefined for none). A paid entry
 * that turns free (its early access ends) makes the document stale from then (`staleFrom`).
 */
export async function gather(
  s: Services,
  feed: FeedRecord,
  bodyOf: (entry: EntryRecord, free: boolean) => Promise<FeedBody | undefined>,
  staleFrom: (at: number) => void,
): Promise<Gathered> {
  const now = nowSeconds()
  const rows = await s.entries.list({ feedId: feed.id, limit: LISTED_ENTRIES })
  for (const e of rows) if (!isFreeNow(e, now) && e.expires_at !== null) staleFrom(e.expires_at)
  const [creator, entries] = await Promise.all([
    s.wallets.byAddress(feed.owner_wallet_address).catch(() => null),
    Promise.all(
      rows.map(async (entry) => {
        const free = isFreeNow(entry, now)
        return { entry, free, body: await bodyOf(entry, free) }
      }),
    ),
  ])
  const updatedAt = Math.max(feed.updated_at, ...rows.map((e) => e.updated_at))
  return { baseUrl: s.publicUrl(), network: soldOnNames(s.config), feed, creator, entries, updatedAt }
}

/** The feed in `format`, with its validators (ETag: a hash of the bytes; Last-Modified: the latest change). */
export function render(facts: SyndicationFacts, format: Format): Document {
  const body = SYNDICATE[format](facts)
  return { body, etag: `"${Bun.hash(body).toString(36)}"`, lastModified: new Date(facts.updatedAt * 1000).toUTCString() }
}

/** How much a document weighs in the read memo. */
export const documentWeight = (d: Document) => 2 * d.body.length

/** 304 when the reader has this version: by ETag, or (without one) by a date no older than the last change. */
export function unchanged(request: Request, d: Document): boolean {
  const etags = request.headers.get('if-none-match')
  if (etags !== null) return matchesEtag(etags, d.etag)
  const since = Date.parse(request.headers.get('if-modified-since') ?? '')
  return Number.isFinite(since) && since >= Date.parse(d.lastModified)
}

export interface DocumentRoutes {
  /** The route of a format's document, e.g. `/v1/feeds/:feed_id/feed.xml`. */
  path: (format: Format) => string
  /** The document asked for, and the headers its answers carry beside its type and validators (304 too). */
  read: (params: Record<string, string>, format: Format) => Promise<{ document: Document; headers: Record<string, string> }>
  /** What the 200 holds. */
  ok: (format: Format) => string
  /** The error statuses the route answers. */
  refusals: number[]
  summary: (format: Format) => string
  description: string
}

/** A GET route per format on `app`, answering the document (or 304) with its type, validators and headers. */
export function documentRoutes<App extends Elysia<any, any, any, any, any, any, any>>(app: App, o: DocumentRoutes): App {
  for (const format of Object.keys(FORMATS) as Format[]) {
    app.get(
      o.path(format),
      async (context) => {
        const { params, request } = context as { params: Record<string, string>; request: Request }
        const { document: d, headers: more } = await o.read(params, format)
        const headers = { 'content-type': FORMATS[format], etag: d.etag, 'last-modified': d.lastModified, ...more }
        return unchanged(request, d) ? new Response(null, { status: 304, headers }) : new Response(d.body, { headers })
      },
      {
        response: {
          200: t.String({
            format: 'binary',
            'x-media-type': FORMATS[format].split(';')[0],
            description: o.ok(format),
          }),
          304: NoBody('not modified (If-None-Match or If-Modified-Since)'),
          ...errors(...o.refusals),
        },
        detail: { summary: o.summary(format), description: o.description },
      },
    )
  }
  return app
}
