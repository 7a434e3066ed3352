// A pass holder's private feed (domain/pass-feed-urls.ts): the holder asks for its URL signed (POST) or revokes it
// (DELETE); podcast apps and feed readers, which send no signature, then read the feed and its enclosures at
// /v1/pass-feeds/{token}/… while the pass runs. Every answer there is the holder's alone: no shared cache stores it
// (`private, no-store`) and no search engine indexes it. Reads through it pay nothing and write nothing.
import { Elysia } from 'elysia'
import type { EntryRecord, FeedRecord } from '../models/records.ts'
import { PassFeedUrl } from '../models/index.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { uuid } from './params.ts'
import { contentText, serveContent } from './serve-content.ts'
import { type Document, DESCRIPTIONS, documentRoutes, documentWeight, gather, render } from './feed-documents.ts'
import { mediaTypeBase } from '../domain/media-type.ts'
import { contentResponses, errors, NoBody } from '../edge/openapi.ts'
import type { Format } from '../pages/syndication.ts'
import type { FeedBody } from '../pages/feed-bodies.ts'

/** Plain text, Markdown and JSON up to this size are carried inline (as text, never as markup); the rest is enclosed. */
const INLINE_MAX_BYTES = 256 * 1024
const INLINE_TYPES = new Set(['text/plain', 'text/markdown', 'application/json'])
const PRIVATE = 'private, no-store'
/** A holder's feed is theirs: kept out of search engines, and its address out of the Referer of the links in it. */
const UNLISTED = { 'x-robots-tag': 'noindex, nofollow, noarchive', 'referrer-policy': 'no-referrer' }
/** About how many characters what serving an entry needs weighs in the read memo (as routes/access-links.ts). */
const SERVABLE_CHARS = 300

const REFUSED =
  'Refused: 404 FEED_URL_NOT_FOUND (not a URL of this server), 410 FEED_URL_REVOKED (its holder revoked it), 403 ' +
  'PASS_EXPIRED (the pass has ended: buying it again opens the same URL again), 404 FEED_NOT_FOUND (the feed was ' +
  'deleted), 451 TAKEN_DOWN.'

export const passFeedRoutes = (s: Services) => {
  const base = (token: string) => `${s.publicUrl()}/v1/pass-feeds/${token}`
  const servable = (entry: EntryRecord) =>
    s.cached.get(
      `servable:${entry.id}`,
      () => s.entries.servable(entry),
      () => SERVABLE_CHARS,
    )

  /** The entry's content when the feed carries it inline (as text), else undefined (enclosed). */
  async function inline(entry: EntryRecord): Promise<FeedBody | undefined> {
    if (!INLINE_TYPES.has(mediaTypeBase(entry.mime_type) ?? '') || entry.size > INLINE_MAX_BYTES) return undefined
    const text = await contentText(s.content, await servable(entry), INLINE_MAX_BYTES)
    return text === null ? undefined : { text }
  }

  /** The feed as the holder of URL `urlId` reads it, kept until the records change (as the public one is). */
  function document(feed: FeedRecord, urlId: string, format: Format): Promise<Document> {
    const token = s.passFeedUrls.tokenOf(urlId)
    return s.cached.get<Document>(
      `pass-feed:${format}:${urlId}`,
      async (staleFrom) => {
        const facts = await gather(s, feed, inline, staleFrom)
        const holder = { self: (f: Format) => `${base(token)}/${f}`, bytes: (e: EntryRecord) => `${base(token)}/entries/${e.id}/content` }
        return render({ ...facts, holder }, format)
      },
      documentWeight,
    )
  }

  const app = new Elysia({ tags: ['Passes'] })
    .use(walletAuth(s.auth))
    .post(
      '/v1/feeds/:feed_id/pass/feed-url',
      async ({ params, signer }): Promise<PassFeedUrl> => {
        const token = await s.passFeedUrls.issue(signer, uuid(params.feed_id, 'feed_id'))
        return { url: `${base(token)}/feed.xml`, atom_url: `${base(token)}/feed.atom`, json_url: `${base(token)}/feed.json` }
      },
      {
        wallet: true,
        response: { 200: PassFeedUrl, ...errors(403, 404, 451) },
        detail: {
          summary: "Get the holder's private feed URL (pass holder)",
          description:
            'For a wallet whose pass to the feed runs now (or its owner): RSS, Atom and JSON Feed URLs that read every ' +
            'entry with its full content (plain text, Markdown and JSON up to 256 KiB inline, everything else as ' +
            'enclosures whose URLs carry the same token, with Range) and no signature, for podcast apps and feed ' +
            'readers. Asked again, the same URLs, until revoked. They stop when the pass ends; buying it again opens them ' +
            'again. 403 PASS_REQUIRED when no pass runs; 404 FEED_NOT_FOUND for a deleted feed.',
        },
      },
    )
    .delete(
      '/v1/feeds/:feed_id/pass/feed-url',
      async ({ params, signer }) => {
        await s.passFeedUrls.revoke(signer, uuid(params.feed_id, 'feed_id'))
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Revoked'), ...errors(404, 451) },
        detail: {
          summary: "Revoke the holder's private feed URL (its holder)",
          description:
            "The signer's own URL to the feed stops at once, for good (410 FEED_URL_REVOKED), even after the pass ended; " +
            'the next POST makes a new one. 404 FEED_URL_NOT_FOUND when none stands.',
        },
      },
    )
    .get(
      '/v1/pass-feeds/:token/entries/:entry_id/content',
      async ({ params, request }) => {
        const { entry } = await s.passFeedUrls.admitEntry(params.token, uuid(params.entry_id, 'entry_id'))
        const answer = await serveContent(s.content, await servable(entry), request, PRIVATE)
        for (const [name, value] of Object.entries(UNLISTED)) answer.headers.set(name, value)
        return answer
      },
      {
        response: { ...contentResponses("The entry's bytes, inline"), ...errors(400, 403, 404, 410, 451) },
        detail: {
          summary: "An entry's bytes through a holder's private feed",
          description: `What the feed's enclosures point at: the bytes, whole or by Range, with no signature. ${REFUSED}`,
        },
      },
    )
  return documentRoutes(app, {
    path: (format) => `/v1/pass-feeds/:token/${format}`,
    read: async (params, format) => {
      const { feed, url } = await s.passFeedUrls.admit(params.token!)
      return { document: await document(feed, url.id, format), headers: { 'cache-control': PRIVATE, ...UNLISTED } }
    },
    ok: (format) => `The holder's feed as ${DESCRIPTIONS[format]}: its 50 newest entries, in full`,
    refusals: [403, 404, 410, 451],
    summary: (format) => `A holder's private feed as ${DESCRIPTIONS[format]}`,
    description: `Every entry the reader's: full text inline, media as enclosures at this URL's token. ${REFUSED}`,
  })
}
