// The pages a person reads in a browser: /, a feed, an entry (or its paywall), a creator, the leaderboards, and the
// script and style they load. Each page is made from the same services and kept in the same read memo as the API's
// answers (until the records or the leaderboards change), so a warm page costs a lookup.
import { soldOnNames } from '../config.ts'
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import type { FeedRecord } from '../models/records.ts'
import type { FeedCard } from '../pages/cards.ts'
import type { BoardItem, BoardName } from '../models/leaderboard.ts'
import { DomainError } from '../domain/errors.ts'
import { STATUS } from '../edge/errors.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'
import { nowSeconds } from '../lib/clock.ts'
import { html } from '../pages/html.ts'
import { page, PAGE_HEADERS } from '../pages/layout.ts'
import { homePage } from '../pages/home.ts'
import { renderMarkdown } from '../pages/markdown.ts'
import { feedPageFor } from './feed-page.ts'
import { homeKey, keptPage } from './kept-pages.ts'
import { entryPage } from '../pages/entry.ts'
import { creatorPage } from '../pages/creator.ts'
import { boardsPage, PAGE_PERIODS, type PagePeriod } from '../pages/boards.ts'
import { ASSET_VERSION, ASSETS } from '../pages/assets.ts'
import { asResponse, entryGate } from './entry-gate.ts'
import { wantsPage } from '../chain/x402/resource-server.ts'
import { entryRows } from './entries.ts'
import { uuid } from './params.ts'
import { sessionCookie } from './wallet-auth.ts'
import { RECEIPT_TTL_S } from '../domain/access-tokens.ts'

const HOME_FEEDS = 12
const HOME_CREATORS = 10
const CREATOR_FEEDS = 100
const BOARD_LENGTH = 20
/** Markdown shown rendered in its page up to this size; a longer one is read as text. */
const RENDERED_BYTES = 512 * 1024
const MARKDOWN = /^text\/(markdown|x-markdown)\b/i

const HEADERS = withCors(PAGE_HEADERS)

/** Board items as the API serves them (its JSON text), for a page to show. */
const items = <K extends BoardName>(_board: K, body: string): BoardItem<K>[] => JSON.parse(body).data

/** The page a person in a browser gets at a path nothing is served at (an API client gets the JSON 404). */
export const notFoundPage = (s: Services, request: Request): Response | null =>
  wantsPage(request.headers) ? errorPage(s, new DomainError('NOT_FOUND', 'not found')) : null

/** A page telling a person what went wrong, with the status the API gives the same error. */
function errorPage(s: Services, error: unknown): Response {
  if (!(error instanceof DomainError)) throw error
  const status = error.code === 'INVALID_PARAMETER' ? 404 : (STATUS[error.code] ?? 400)
  const title = status === 404 ? 'Not found' : status === 451 ? 'Taken down' : 'Cannot show this page'
  const message = status === 404 ? 'Nothing is here, or it was deleted.' : error.message
  const body = page(
    { title, network: soldOnNames(s.config), assetVersion: ASSET_VERSION },
    html`<section class="intro"><h1>${title}</h1><p>${message}</p><p><a href="/">Back to the feeds</a></p></section>`,
  )
  return new Response(body, { status, headers: HEADERS })
}

const feedCard = (f: FeedRecord, ownerUsername: string | null): FeedCard => ({
  ...f,
  tags: f.tags,
  owner_wallet: f.owner_wallet_address,
  owner_username: ownerUsername,
  total_revenue: f.total_revenue.toString(),
})

export async function feedCardsOf(s: Services, feeds: FeedRecord[]): Promise<FeedCard[]> {
  const owners = new Map<string, string | null>()
  for (const f of feeds) {
    if (!owners.has(f.owner_wallet_address))
      owners.set(f.owner_wallet_address, (await s.wallets.byAddress(f.owner_wallet_address).catch(() => null))?.username ?? null)
  }
  return feeds.map((f) => feedCard(f, owners.get(f.owner_wallet_address) ?? null))
}

export function homePageOf(s: Services): Promise<Prepared> {
  return keptPage(s, homeKey(s), async () => {
    const trending = items('trending', s.stats.plain('trending', HOME_FEEDS / 2))
    const newest = await feedCardsOf(s, await s.feeds.list({ is_active: true, min_entries: 0, limit: HOME_FEEDS }))
    const categories = await s.categories.list({ isActive: true, limit: 100 })
    const creators = items('top-providers', s.stats.byPeriod('top-providers', 'all', HOME_CREATORS))
    return homePage({ network: soldOnNames(s.config), trending, newest, categories, creators, assetVersion: ASSET_VERSION })
  })
}

/** A page made by `made`, or the error page of what it threw (with the status the API gives that error). */
export async function answerPage(s: Services, made: () => Promise<Prepared | Response>): Promise<Response> {
  try {
    return asResponse(await made())
  } catch (error) {
    return errorPage(s, error)
  }
}

export const pageRoutes = (s: Services) => {
  const gate = entryGate(s)
  const network = soldOnNames(s.config)
  const answer = (made: () => Promise<Prepared | Response>) => answerPage(s, made)

  return new Elysia({ detail: { hide: true } })
    .get('/', () => answer(() => homePageOf(s)))
    .get('/feeds/:feed_id', ({ params, query, request }) =>
      answer(() => feedPageFor(s, params.feed_id, typeof query.page_token === 'string' ? query.page_token : undefined, request)),
    )
    .get('/feeds/:feed_id/entries/:entry_id', ({ params, request }) =>
      answer(async () => {
        const [feedId, entryId] = [uuid(params.feed_id, 'feed_id'), uuid(params.entry_id, 'entry_id')]
        const { feed, entry } = await entryRows(s, feedId, entryId)
        const session = sessionCookie(request.headers)
        const signer = session ? await s.auth.sessionSigner(session) : null
        const access = signer ? await s.entries.access(feed, entry, signer) : s.entries.anonymousAccess(feed, entry)
        if (access === 'withdrawn' || !feed.is_active) throw new DomainError('ENTRY_NOT_FOUND', 'entry not found')
        if (access === 'pay') {
          s.challenges.served(feed.id, entry.id)
          return gate.paywallAt(feed, entry, `/v1/feeds/${feedId}/entries/${entryId}`)
        }
        const creator = () => s.wallets.byAddress(feed.owner_wallet_address).catch(() => null)
        const rendered = async () => {
          if (!MARKDOWN.test(entry.mime_type)) return undefined
          const text = await s.entries.text(entry, RENDERED_BYTES)
          return text === null ? undefined : renderMarkdown(text)
        }
        if (access === 'free') {
          return keptPage(s, `entry:${feedId}/${entryId}`, async () =>
            entryPage({
              network,
              origin: s.publicUrl(),
              feed,
              entry,
              creator: await creator(),
              free: true,
              contentUrl: `/v1/feeds/${feedId}/entries/${entryId}/content`,
              rendered: await rendered(),
              assetVersion: ASSET_VERSION,
            }),
          )
        }
        // The owner's or a buyer's: made for them alone, the bytes behind a receipt link.
        const token = await s.accessTokens.sign({ kind: 'receipt', entryId, feedId, exp: nowSeconds() + RECEIPT_TTL_S })
        const body = entryPage({
          network,
          origin: s.publicUrl(),
          feed,
          entry,
          creator: await creator(),
          free: false,
          contentUrl: `/v1/access/${token}`,
          rendered: await rendered(),
          assetVersion: ASSET_VERSION,
        })
        return new Response(body, { headers: { ...PAGE_HEADERS, 'cache-control': 'private, no-store' } })
      }),
    )
    .get('/creators/:address', ({ params }) =>
      answer(() =>
        keptPage(s, `creator:${params.address.toLowerCase()}#${s.stats.ranksGeneration()}`, async (staleFrom) => {
          const wallet = await s.wallets.byAddress(params.address)
          const now = nowSeconds()
          staleFrom(now + 60) // the statistics' periods move on
          const stats = await s.stats.stats(wallet.id, now)
          const feeds = (await s.feeds.list({ owner_id: wallet.id, is_active: true, min_entries: 0, limit: CREATOR_FEEDS })).map((f) =>
            feedCard(f, wallet.username),
          )
          return creatorPage({ network, origin: s.publicUrl(), wallet, stats, feeds, assetVersion: ASSET_VERSION })
        }),
      ),
    )
    .get('/leaderboards', ({ query }) =>
      answer(async () => {
        const period = (query.period ?? 'all') as PagePeriod
        if (!PAGE_PERIODS.some(([p]) => p === period)) throw new DomainError('INVALID_PERIOD', 'period must be one of 1d, 7d, 30d, all')
        return keptPage(s, `boards:${period}#${s.stats.boardsGeneration()}`, async () =>
          boardsPage({
            network,
            period,
            topRevenue: items('top-revenue', s.stats.byPeriod('top-revenue', period, BOARD_LENGTH)),
            mostPopular: items('most-popular', s.stats.byPeriod('most-popular', period, BOARD_LENGTH)),
            topProviders: items('top-providers', s.stats.byPeriod('top-providers', period, BOARD_LENGTH)),
            categories: items('category-stats', s.stats.plain('category-stats', Number.MAX_SAFE_INTEGER)),
            assetVersion: ASSET_VERSION,
          }),
        )
      }),
    )
    .get('/assets/:name', ({ params, query }) => {
      const asset = ASSETS[params.name as keyof typeof ASSETS]
      if (!asset) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } })
      // A versioned name never changes: the page names the next version.
      const cacheControl = query.v === ASSET_VERSION ? 'public, max-age=31536000, immutable' : 'no-cache'
      return new Response(asset.text, {
        headers: { 'content-type': asset.type, 'cache-control': cacheControl, 'x-content-type-options': 'nosniff' },
      })
    })
}
