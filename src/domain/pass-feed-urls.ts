// A pass holder's private feed URL: how podcast apps and feed readers, which send no signature, read a paid feed. The
// holder (or the feed's owner) asks for it signed; it opens the feed while the pass runs, and stops when the pass
// ends or the holder revokes it; a pass bought again opens the same URL again, unless it was revoked.
//
// The URL is stable: asking again answers the same one, so a podcast app already subscribed never breaks when its
// user asks again. So it cannot be a random token stored hashed (the plaintext would be gone), and storing the
// plaintext would put every URL in every copy of the table. Its token is the row's id and a MAC of it under the server
// key: made again whenever asked, checked without storing it, and only a revocation (a new row) changes it.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Records } from '../store/stores.ts'
import type { EntryRecord, FeedRecord, PassFeedUrlRecord } from '../models/records.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'
import type { Signer } from './auth.ts'
import type { FeedService } from './feeds.ts'
import type { EntryService } from './entries.ts'

const ID_BYTES = 16
const MAC_BYTES = 16
/** base64url of the id's 16 bytes and 16 of the MAC. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** A read kept until the records change, or until the time it says it is stale from (the read memo). */
export type KeptUntil = <T>(key: string, read: (staleFrom: (at: number) => void) => Promise<T>) => Promise<T>

const notFound = (): never => fail('FEED_URL_NOT_FOUND', 'no such private feed URL')
const feedGone = (): never => fail('FEED_NOT_FOUND', 'feed not found')
const holds = (holderLc: string, feed: FeedRecord) => holderLc === feed.owner_wallet_address.toLowerCase()

export function passFeedUrlService(d: {
  records: Records
  feeds: FeedService
  entries: EntryService
  secret: Uint8Array
  kept?: KeptUntil
}) {
  const kept: KeptUntil = d.kept ?? ((_key, read) => read(() => {}))
  const read = d.records.read
  const key = createHmac('sha256', d.secret).update('trellis pass feed urls').digest()
  const mac = (id: Buffer) => createHmac('sha256', key).update(id).digest().subarray(0, MAC_BYTES)

  const tokenOf = (id: string): string => {
    const bytes = Buffer.from(id.replaceAll('-', ''), 'hex')
    return Buffer.concat([bytes, mac(bytes)]).toString('base64url')
  }

  /** The row id a token of ours names, or null (malformed, or a MAC that is not ours). */
  function idOf(token: string): string | null {
    if (!TOKEN.test(token)) return null
    const bytes = Buffer.from(token, 'base64url')
    const id = bytes.subarray(0, ID_BYTES)
    if (!timingSafeEqual(bytes.subarray(ID_BYTES), mac(id))) return null
    const hex = id.toString('hex')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }

  /** A pass of the holder to the feed runs now (or the holder owns the feed); else PASS_EXPIRED, never kept. */
  const passRuns = (holderLc: string, feed: FeedRecord): Promise<unknown> =>
    holds(holderLc, feed)
      ? Promise.resolve()
      : kept(`pass-feed:until:${holderLc}:${feed.id}`, async (staleFrom) => {
          // A refusal is thrown, so never kept: a pass bought meanwhile opens the URL at once.
          const until = await read.passes.runningUntil(holderLc, feed.id, nowSeconds())
          if (until === null) fail('PASS_EXPIRED', 'the pass to this feed has ended: buy it again to read through this URL again')
          staleFrom(until!)
          return until
        })

  async function activeFeed(feedId: string): Promise<FeedRecord> {
    const feed = await kept(`pass-feed:feed:${feedId}`, () => d.feeds.get(feedId)) // 404 FEED_NOT_FOUND, 451 TAKEN_DOWN
    return feed.is_active ? feed : feedGone()
  }

  /**
   * The feed a token opens now, and its URL's record. Refused: an unknown or forged token 404 FEED_URL_NOT_FOUND, a
   * revoked one 410 FEED_URL_REVOKED, a deleted feed 404 FEED_NOT_FOUND, a taken-down one 451, an ended pass 403
   * PASS_EXPIRED. Reads only, kept until the records change (a revocation, a pass bought) or the pass ends.
   */
  async function admit(token: string): Promise<{ feed: FeedRecord; url: PassFeedUrlRecord }> {
    const id = idOf(token) ?? notFound()
    const url = (await kept(`pass-feed:url:${id}`, () => read.passFeedUrls.byId(id))) ?? notFound()
    if (url.revoked_at !== null) fail('FEED_URL_REVOKED', 'this private feed URL was revoked by its holder')
    const feed = await activeFeed(url.feed_id)
    await passRuns(url.holder_lc, feed)
    return { feed, url }
  }

  return {
    tokenOf,

    /**
     * The signer's standing private feed URL to the feed (its token), made if none stands: for a wallet whose pass
     * to it runs now, or its owner; otherwise 403 PASS_REQUIRED.
     */
    async issue(signer: Signer, feedId: string): Promise<string> {
      const feed = await activeFeed(feedId)
      const holder = signer.address.toLowerCase()
      if (!holds(holder, feed) && (await read.passes.runningUntil(holder, feed.id, nowSeconds())) === null)
        fail('PASS_REQUIRED', 'a private feed URL is for a wallet whose pass to this feed runs now: buy one at POST …/pass/purchases')
      const url = await d.records.transact((tx) =>
        tx.passFeedUrls.standing({ id: newId(), feed_id: feed.id, holder_lc: holder, now: nowSeconds() }),
      )
      return tokenOf(url.id)
    },

    /** Revokes the signer's standing URL to the feed (even after the pass ended); 404 FEED_URL_NOT_FOUND when none stands. */
    async revoke(signer: Signer, feedId: string): Promise<void> {
      const feed = await d.feeds.get(feedId)
      const revoked = await d.records.transact((tx) => tx.passFeedUrls.revoke(feed.id, signer.address.toLowerCase(), nowSeconds()))
      if (!revoked) fail('FEED_URL_NOT_FOUND', 'no private feed URL of yours stands for this feed')
    },

    admit,

    /** An entry of the feed a token opens (see admit): active, and not taken down (451). */
    async admitEntry(token: string, entryId: string): Promise<{ feed: FeedRecord; entry: EntryRecord }> {
      const { feed } = await admit(token)
      const { entry } = await d.entries.get(feed.id, entryId)
      return entry.is_active ? { feed, entry } : fail('ENTRY_NOT_FOUND', 'entry not found')
    },
  }
}
export type PassFeedUrlService = ReturnType<typeof passFeedUrlService>
