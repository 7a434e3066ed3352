// Access links: owner-made, expiring, use-limited links that open one entry without signature or payment.
import type { Records } from '../store/stores.ts'
import type { AccessLinkRecord, EntryRecord, FeedRecord } from '../models/records.ts'
import type { CreateAccessLink } from '../models/access-link.ts'
import { newId, isUuid } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { DomainError, fail } from './errors.ts'
import type { Signer } from './auth.ts'
import type { AccessTokens, AccessClaims } from './access-tokens.ts'
import type { EntryService } from './entries.ts'
import { rangeSessions } from './range-sessions.ts'

export const DEFAULT_LINK_LIFETIME_S = 24 * 3600
const UNKEPT = { unkept: true } as const

/**
 * A read kept until the records next change (the read memo; on another instance, until it hears of the change).
 * Uses are unkept writes, so a kept link's `current_uses` may be behind: only an unlimited link is taken as kept,
 * and its count statement still checks that the link is active and unexpired.
 */
export type Kept = <T>(key: string, read: () => Promise<T>) => Promise<T>

export function accessLinkService(d: { records: Records; entries: EntryService; tokens: AccessTokens; kept?: Kept }) {
  const kept: Kept = d.kept ?? ((_key, read) => read())
  const links = d.records.read.accessLinks
  const isOwner = (signer: Signer, feed: FeedRecord) => signer.address.toLowerCase() === feed.owner_wallet_address.toLowerCase()

  /**
   * The entry and its feed; a missing feed or entry is ENTRY_NOT_FOUND (the seed's code here). A taken-down one stays
   * 451 TAKEN_DOWN, as every read of it does (domain/moderation.ts).
   */
  async function entryOrNotFound(feedId: string, entryId: string): Promise<{ feed: FeedRecord; entry: EntryRecord }> {
    try {
      return await d.entries.get(feedId, entryId)
    } catch (error) {
      if (error instanceof DomainError && error.code.endsWith('NOT_FOUND')) fail('ENTRY_NOT_FOUND', 'entry not found')
      throw error
    }
  }

  /** The entry, for its feed owner only. */
  async function ownedEntry(signer: Signer, feedId: string, entryId: string): Promise<{ feed: FeedRecord; entry: EntryRecord }> {
    const found = await entryOrNotFound(feedId, entryId)
    if (!isOwner(signer, found.feed)) fail('UNAUTHORIZED', 'only the owner of the entry may manage its access links')
    return found
  }

  const sessions = rangeSessions()

  const sessionKey = (link: AccessLinkRecord, client: string) => `${link.id} ${client}`

  /**
   * Refuses a link that is revoked, expired or used up: `exhausted` when its count was just refused, else by its
   * record, unless `inSession` (a range session already paid for keeps going).
   */
  function refuseUnusable(link: AccessLinkRecord, now: number, exhausted = false, inSession = false): void {
    if (!link.is_active) fail('ACCESS_LINK_REVOKED', 'access link was revoked by its owner')
    if (link.expires_at <= now) fail('ACCESS_LINK_EXPIRED', 'access link has expired')
    const usedUp = exhausted || (link.max_uses !== null && link.current_uses >= link.max_uses && !inSession)
    if (usedUp) fail('ACCESS_LINK_EXHAUSTED', 'access link has no uses left')
  }

  /**
   * Counts one use of the link, atomically (of N concurrent counts, exactly the uses left succeed), in a commit
   * shared with the other writes of this turn; resolves once that commit is durable. False when the client left
   * before the count (`gone`): nothing is counted. Throws the precise refusal when no use is left. One statement:
   * on PostgreSQL it commits alone.
   */
  async function countOpen(link: AccessLinkRecord, gone: () => boolean): Promise<boolean> {
    // One turn of the event loop first: a client that closed right after its request is seen gone by then.
    await new Promise((resolve) => setImmediate(resolve))
    const now = nowSeconds()
    // Unkept: no read of access links is kept, so a use leaves the read memo as it was. Counted as a change, every
    // open emptied the memo, and the next open read its entry and feed again, as did every other read of the market.
    const outcome = await d.records.single(
      async (tx) => (gone() ? 'gone' : (await tx.accessLinks.use(link.id, now)) ? 'counted' : 'refused'),
      UNKEPT,
    )
    if (outcome === 'refused') refuseUnusable((await links.byId(link.id))!, now, true)
    return outcome === 'counted'
  }

  const tokenFor = (link: Pick<AccessLinkRecord, 'id' | 'entry_id' | 'feed_id' | 'expires_at'>) =>
    d.tokens.sign({ kind: 'link', linkId: link.id, entryId: link.entry_id, feedId: link.feed_id, exp: link.expires_at })

  return {
    tokenFor,

    async create(
      signer: Signer,
      feedId: string,
      entryId: string,
      input: CreateAccessLink,
    ): Promise<{ link: AccessLinkRecord; token: string }> {
      const { feed, entry } = await ownedEntry(signer, feedId, entryId)
      if (!entry.is_active || !feed.is_active) fail('ENTRY_NOT_FOUND', 'entry is no longer available')
      const now = nowSeconds()
      const expiresAt = input.expires_at ?? now + DEFAULT_LINK_LIFETIME_S
      if (!Number.isInteger(expiresAt) || expiresAt <= now)
        fail('INVALID_EXPIRES_AT', 'expires_at must be a Unix time in seconds in the future')
      if (input.max_uses !== undefined && input.max_uses !== null && (!Number.isInteger(input.max_uses) || input.max_uses < 1)) {
        fail('INVALID_PARAMETER', 'invalid max_uses', 'max_uses must be a positive integer, or omitted for unlimited')
      }
      const id = newId()
      const row = {
        id,
        entry_id: entry.id,
        feed_id: feed.id,
        created_by: signer.address.toLowerCase(),
        expires_at: expiresAt,
        max_uses: input.max_uses ?? null,
        description: input.description ?? null,
        now,
      }
      const link = await d.records.transact(async (tx) => (await tx.accessLinks.insert(row), (await tx.accessLinks.byId(id))!))
      return { link, token: await tokenFor(link) }
    },

    async list(signer: Signer, feedId: string, entryId: string, beforeId: string | undefined, limit: number): Promise<AccessLinkRecord[]> {
      const { entry } = await ownedEntry(signer, feedId, entryId)
      return links.listForEntry(entry.id, beforeId, limit)
    },

    async revoke(signer: Signer, linkId: string): Promise<void> {
      if (!isUuid(linkId)) fail('INVALID_PARAMETER', 'invalid access link id', 'id must be a UUID')
      const link = (await links.byId(linkId.toLowerCase())) ?? fail('ACCESS_LINK_NOT_FOUND', 'access link not found')
      const { feed } = await d.entries.get(link.feed_id, link.entry_id)
      if (!isOwner(signer, feed)) fail('UNAUTHORIZED', 'only the owner of the entry may revoke its access links')
      await d.records.transact((tx) => tx.accessLinks.deactivate(link.id, nowSeconds()))
    },

    /**
     * Whether a token may open its entry now: the entry, and for a use-counted link its record. Reads only; a use is
     * counted later (countOpen, countRange), once the answer is known to deliver the bytes. `rangeClient`: a range
     * request's client, whose open range session may go on when the link has no use left.
     */
    async admit(
      claims: AccessClaims,
      rangeClient: string | null = null,
    ): Promise<{ feed: FeedRecord; entry: EntryRecord; link: AccessLinkRecord | null }> {
      // An open reads its entry, feed and link as any open of them since the last change did.
      const found = await kept(`open:${claims.feedId}:${claims.entryId}`, () => entryOrNotFound(claims.feedId, claims.entryId))
      if (!found.entry.is_active || !found.feed.is_active) fail('ENTRY_NOT_FOUND', 'entry is no longer available')
      if (claims.kind === 'receipt') return { ...found, link: null }
      const linkId = claims.linkId
      const held = linkId ? await kept(`open:${linkId}`, () => links.byId(linkId)) : undefined
      // A counted link's uses decide what even an answer that counts none (HEAD, 304, a range in session) may get.
      const link =
        (held?.max_uses === null ? held : held && (await links.byId(held.id))) || fail('INVALID_ACCESS_TOKEN', 'access token is invalid')
      if (link.entry_id !== found.entry.id) fail('INVALID_ACCESS_TOKEN', 'access token is invalid')
      const inSession = rangeClient !== null && sessions.live(sessionKey(link, rangeClient))
      refuseUnusable(link, nowSeconds(), false, inSession)
      return { ...found, link }
    },

    countOpen,

    /** A range of `bytes` of an entry of `size`, from `client`: counts one use per range session (see range-sessions.ts). */
    countRange(link: AccessLinkRecord, client: string, bytes: number, size: number, gone: () => boolean): Promise<boolean> {
      return sessions.admit(sessionKey(link, client), bytes, size, () => countOpen(link, gone))
    },
  }
}
export type AccessLinkService = ReturnType<typeof accessLinkService>
