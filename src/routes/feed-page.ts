// A feed's page: kept in the read memo for everyone (hot-reads.ts serves it), and made for a reader signed in by a
// browser session, who is told what is theirs: the entries they bought or own read "Read" (not "Buy"), and how long
// their pass runs. That copy is never kept or shared.
import { soldOnNames } from '../config.ts'
import type { Services } from './services.ts'
import type { Prepared } from '../edge/request-wrapper.ts'
import { DomainError } from '../domain/errors.ts'
import { isFreeNow } from '../domain/entries.ts'
import { nowSeconds } from '../lib/clock.ts'
import { feedPage, type FeedFacts, type Viewer } from '../pages/feed.ts'
import { PAGE_HEADERS } from '../pages/layout.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import { feedKey, keptPage } from './kept-pages.ts'
import { page as pageOf } from './pagination.ts'
import { uuid } from './params.ts'
import { sessionCookie } from './wallet-auth.ts'

const FEED_PAGE_ENTRIES = 50

/** What the page shows, the same for every reader. */
async function feedFacts(s: Services, feedId: string, token: string | undefined, staleFrom: (at: number) => void): Promise<FeedFacts> {
  const feed = await s.feeds.get(feedId)
  if (!feed.is_active) throw new DomainError('FEED_NOT_FOUND', 'feed not found')
  const scope = `entries:${feedId}`
  const rows = await s.entries.list({ feedId, beforeId: s.pages.decode<string>(scope, token), limit: FEED_PAGE_ENTRIES + 1 })
  const listed = pageOf(rows, FEED_PAGE_ENTRIES, s.pages, scope, (last) => last.id)
  const now = nowSeconds()
  for (const e of listed.data) if (!isFreeNow(e, now) && e.expires_at !== null) staleFrom(e.expires_at)
  return {
    network: soldOnNames(s.config),
    origin: s.publicUrl(),
    feed,
    creator: await s.wallets.byAddress(feed.owner_wallet_address).catch(() => null),
    category: feed.category_id ? await s.categories.get(feed.category_id).catch(() => null) : null,
    entries: listed.data.map((entry) => ({ entry, free: isFreeNow(entry, now) })),
    nextPageToken: listed.pagination.next_page_token,
    assetVersion: ASSET_VERSION,
  }
}

/** The page everyone without a session gets, kept until the records change. */
export function feedPageOf(s: Services, rawId: string, token?: string): Promise<Prepared> {
  const feedId = uuid(rawId, 'feed_id')
  return keptPage(s, feedKey(feedId, token), async (staleFrom) => feedPage(await feedFacts(s, feedId, token, staleFrom)))
}

/** The feed's page for this request: the kept one, or a signed-in reader's own. */
export async function feedPageFor(s: Services, rawId: string, token: string | undefined, request: Request): Promise<Prepared | Response> {
  const session = sessionCookie(request.headers)
  const signer = session ? await s.auth.sessionSigner(session) : null
  if (!signer) return feedPageOf(s, rawId, token)
  const facts = await feedFacts(s, uuid(rawId, 'feed_id'), token, () => {})
  const address = signer.address.toLowerCase()
  const owner = facts.feed.owner_wallet_address.toLowerCase() === address
  const passUntil = owner ? null : await s.passes.heldUntil(address, facts.feed.id)
  const paid = facts.entries.filter(({ free }) => !free).map(({ entry }) => entry)
  const owned = owner || passUntil !== null ? new Set<string>() : await s.purchases.entitledAmong(address, paid)
  const viewer: Viewer = { owner, passUntil, owned }
  return new Response(feedPage({ ...facts, viewer }), { headers: { ...PAGE_HEADERS, 'cache-control': 'private, no-store' } })
}
