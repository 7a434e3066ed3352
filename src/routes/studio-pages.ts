// The studio's pages (/studio…): made here from the signed-in wallet's own records, with the wallet the studio
// session stands for; without a live session, any of them is the sign-in page. What the pages change goes through
// the API (studio.js, with the session's CSRF token): these routes only read, plus the Markdown preview and the
// sales CSV. The pages are private (no-store) and never kept in the read memo.
import { costliest } from '../domain/cheap-prices.ts'
import { soldOnNames } from '../config.ts'
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import type { Signer } from '../domain/auth.ts'
import type { StudioSession } from '../domain/studio-sessions.ts'
import type { WalletRecord } from '../models/records.ts'
import { DomainError, fail } from '../domain/errors.ts'
import { STATUS } from '../edge/errors.ts'
import { STUDIO_COOKIE } from '../domain/sessions.ts'
import { nowSeconds } from '../lib/clock.ts'
import { isUuid } from '../lib/ids.ts'
import { html, type Html } from '../pages/html.ts'
import { PAGE_HEADERS } from '../pages/layout.ts'
import { ASSET_VERSION } from '../pages/assets.ts'
import { renderMarkdown } from '../pages/markdown.ts'
import { signInPage, studioPage, type StudioFrame } from '../pages/studio/frame.ts'
import { dashboardPage } from '../pages/studio/dashboard.ts'
import { feedStudioPage } from '../pages/studio/feed.ts'
import { entryStudioPage } from '../pages/studio/entry.ts'
import { profileStudioPage, webhooksStudioPage } from '../pages/studio/webhooks.ts'
import { cookieOf, studioPageSigner } from './studio-writes.ts'
import { csvAnswer } from './csv.ts'
import { readText } from '../edge/body.ts'

const HEADERS = { ...PAGE_HEADERS, 'cache-control': 'private, no-store' }
const LISTED = 100
/** The Markdown a preview renders at most: as the pages render it (routes/pages.ts). */
const PREVIEW_BYTES = 512 * 1024
const DAY_S = 86_400

interface Studio {
  session: StudioSession
  signer: Signer
  /** The wallet's record; null until it first publishes (a wallet is made with its first feed). */
  wallet: WalletRecord | null
}

type Made = { title: string; section?: StudioFrame['section']; main: Html }

const frameOf = (s: Services): StudioFrame => ({ title: 'Sign in', network: soldOnNames(s.config), assetVersion: ASSET_VERSION })

const answer = (body: string, status = 200) => new Response(body, { status, headers: HEADERS })

/** The sign-in page: the same for everyone (it names no wallet), so made once. */
const signInOf = (s: Services): string => (signInPages.get(s) ?? signInPages.set(s, signInPage(frameOf(s))).get(s))!
const signInPages = new WeakMap<Services, string>()

/** A studio page for the session's wallet, or the sign-in page; a refusal is a page that says why. */
async function studioAnswer(s: Services, request: Request, make: (studio: Studio) => Promise<Made>): Promise<Response> {
  const session = await s.auth.studio.ofPage(cookieOf(request.headers, STUDIO_COOKIE), request.headers.get('sec-fetch-site'))
  if (!session) return answer(signInOf(s))
  const signer: Signer = { address: session.address, network: null }
  const wallet = await s.wallets.byAddress(session.address).catch(() => null)
  const frame = { ...frameOf(s), session: { address: session.address, csrf: session.csrf, walletId: wallet?.id ?? null } }
  try {
    const made = await make({ session, signer, wallet })
    return answer(studioPage({ ...frame, title: made.title, section: made.section }, made.main))
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    const status = STATUS[error.code] ?? 400
    const message = status === 404 ? 'Nothing is here, or it is not yours.' : error.message
    return answer(
      studioPage(
        { ...frame, title: 'Not shown' },
        html`<h1>Not shown</h1><p>${message}</p><p><a href="/studio">Back to the studio</a></p>`,
      ),
      status,
    )
  }
}

/** The analytics range of the dashboard's form (dates, UTC, both days included); the last 30 days by default. */
function rangeOf(query: { from?: string; to?: string; interval?: string }, now: number) {
  const date = (text: string | undefined) =>
    text && /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) / 1000 : Number.NaN
  const to = Number.isNaN(date(query.to)) ? (Math.floor(now / DAY_S) + 1) * DAY_S : date(query.to) + DAY_S
  const from = Number.isNaN(date(query.from)) ? to - 30 * DAY_S : date(query.from)
  const interval = query.interval === 'week' || query.interval === 'month' ? query.interval : 'day'
  const asDate = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)
  return { api: { from: String(from), to: String(to), interval }, shown: { from: asDate(from), to: asDate(to - DAY_S), interval } }
}

/** The session's own feed (any state); 404 for another wallet's, as if it were not there. */
async function ownFeed(s: Services, studio: Studio, id: string) {
  if (!isUuid(id)) throw new DomainError('FEED_NOT_FOUND', 'feed not found')
  const feed = await s.feeds.get(id.toLowerCase())
  if (feed.owner_wallet_address.toLowerCase() !== studio.session.address.toLowerCase())
    throw new DomainError('FEED_NOT_FOUND', 'feed not found')
  return feed
}

const PREVIEW_HEADERS = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }

/** The wallet a preview is made for: a studio page's request (its Origin, its CSRF token), else AUTH_REQUIRED. */
async function previewer(s: Services, request: Request): Promise<Signer> {
  const signer = await studioPageSigner(s.auth, request)
  return signer ?? fail('AUTH_REQUIRED', 'the preview is for the studio: sign in to the studio first')
}

const Range = t.Object({ from: t.Optional(t.String()), to: t.Optional(t.String()), interval: t.Optional(t.String()) })

export const studioPageRoutes = (s: Services) =>
  new Elysia({ name: 'studio-pages', detail: { hide: true } })
    .get(
      '/studio',
      ({ request, query }) =>
        studioAnswer(s, request, async (studio) => {
          const range = rangeOf(query, nowSeconds())
          const analytics = studio.wallet ? await s.analytics.report(studio.signer, studio.wallet.id, range.api) : null
          const feeds = studio.wallet ? await s.feeds.list({ owner_id: studio.wallet.id, min_entries: 0, limit: LISTED }) : []
          const categories = await s.categories.list({ limit: LISTED })
          return { title: 'Studio', section: 'home', main: dashboardPage({ analytics, range: range.shown, feeds, categories }) }
        }),
      { query: Range },
    )
    .get('/studio/feeds/:feed_id', ({ request, params }) =>
      studioAnswer(s, request, async (studio) => {
        const feed = await ownFeed(s, studio, params.feed_id)
        const entries = feed.is_active ? await s.entries.list({ feedId: feed.id, limit: LISTED }) : []
        const categories = await s.categories.list({ limit: LISTED })
        return { title: feed.name, main: feedStudioPage(feed, entries, categories, costliest(s.config.networks)) }
      }),
    )
    .get('/studio/feeds/:feed_id/entries/:entry_id', ({ request, params }) =>
      studioAnswer(s, request, async (studio) => {
        const feed = await ownFeed(s, studio, params.feed_id)
        if (!isUuid(params.entry_id)) throw new DomainError('ENTRY_NOT_FOUND', 'entry not found')
        const { entry } = await s.entries.get(feed.id, params.entry_id.toLowerCase())
        const links = await s.accessLinks.list(studio.signer, feed.id, entry.id, undefined, LISTED)
        return { title: entry.title ?? 'Entry', main: entryStudioPage(feed, entry, links, nowSeconds(), costliest(s.config.networks)) }
      }),
    )
    .get(
      '/studio/webhooks',
      ({ request, query }) =>
        studioAnswer(s, request, async (studio) => {
          const endpoints = await s.webhooks.list(studio.signer)
          const shown = endpoints.find((e) => e.id === query.log?.toLowerCase())
          const log = shown
            ? { endpoint: shown, deliveries: await s.webhooks.deliveries(studio.signer, shown.id, undefined, LISTED) }
            : null
          return { title: 'Webhooks', section: 'webhooks', main: webhooksStudioPage(endpoints, log) }
        }),
      { query: t.Object({ log: t.Optional(t.String()) }) },
    )
    .get('/studio/profile', ({ request }) =>
      studioAnswer(s, request, async (studio) => ({
        title: 'Profile',
        section: 'profile',
        main: studio.wallet
          ? profileStudioPage(studio.wallet)
          : html`<h1>Profile</h1><p class="empty">Your profile is made with your first feed: <a href="/studio">create one</a>.</p>`,
      })),
    )
    .get(
      '/studio/sales.csv',
      async ({ request, query }) => {
        const session = await s.auth.studio.ofPage(cookieOf(request.headers, STUDIO_COOKIE), request.headers.get('sec-fetch-site'))
        if (!session) return answer(signInOf(s), 401)
        const wallet = await s.wallets.byAddress(session.address)
        const { filename, lines } = await s.analytics.csv(
          { address: session.address, network: null },
          wallet.id,
          rangeOf(query, nowSeconds()).api,
        )
        return csvAnswer(filename, lines)
      },
      { query: Range },
    )
    // The Markdown of the publish form as its entry's page will show it: the same renderer and allow-list.
    .post('/studio/preview', ({ body }) => new Response(renderMarkdown(body as string).text, { headers: PREVIEW_HEADERS }), {
      // The studio session (with its CSRF token) is checked before the body is read.
      parse: async ({ request }) => {
        await previewer(s, request)
        return readText(request, PREVIEW_BYTES)
      },
    })
