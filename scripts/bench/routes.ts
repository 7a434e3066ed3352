// Every route a client can reach that the first set of reads (measure-reads.ts) leaves out: the recent entries,
// the cover image, free content, deep cursor pages, single records, operations and the unsigned write. The signed
// writes are measured by measure-signed-writes.ts. docs/performance.md lists which measure covers each route.
import { ADMIN_KEY } from './measure-signed-writes.ts'
import { authHeaders, signer, signerKey } from './signing.ts'
import type { Manifest } from './seed.ts'
import type { ReadTarget } from './measure-reads.ts'

/** Ids and tokens only the running server can give: found once, before any measurement. */
export interface Found {
  deepFeeds: { page: number; token: string }
  deepEntries: { page: number; token: string }
  deepTransactions: { page: number; token: string }
  recentPage2: string
  transaction: { id: string; hash: string }
  walletAddress: string
  /** A feed of the bench reader with a pass on sale. */
  passFeed: string
  /** Its private feed's path (the owner asks for it as a holder does), and a paid entry's bytes through it. */
  passFeedPath: string
  passEnclosure: string
  /** The pages' asset version, as the landing page names it. */
  assetVersion: string
  /** A live browser session's cookie, of the owner of `ownPaid`. */
  sessionCookie: string
  /** The content path of a paid entry the session's wallet owns: read with the cookie, as a past buyer reads. */
  ownPaid: string
  /** The path of an unlimited access link to a free 1 KiB entry: every open counts a use, durably. */
  accessLink: string
  /** The content path of a free 1 MiB entry: past the hot route's 64 KiB, served as Elysia's route serves it. */
  freeMiB: string
  /** The hot feed's RSS as a WebSub topic: its URL as its Link header names it (rel="self", from the public URL). */
  topic: string
  /** The reader's studio session: its cookie and CSRF token, and the paths of its feed and paid entry in the studio. */
  studio: { origin: string; cookie: string; csrf: string; feed: string; entry: string }
}

/** A JSON-RPC message POSTed to /mcp as an MCP client sends it. */
const mcp = (message: unknown): ReadTarget['request'] => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify(message),
})

const BROWSER = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) bench',
}

/** How deep the deep cursor pages go (page 50 of 20 items), or the last page when a listing is shorter. */
export const DEEP_PAGE = 50

async function json(url: string): Promise<any> {
  const response = await fetch(url)
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`)
  return response.json()
}

/** Follows next_page_token from page 1 to page `DEEP_PAGE` (or the last page that has a next one). */
async function deepToken(url: string, path: string): Promise<{ page: number; token: string }> {
  let token: string | null = null
  let page = 1
  let last = { page: 1, token: '' }
  while (page < DEEP_PAGE) {
    const sep = path.includes('?') ? '&' : '?'
    const body = await json(`${url}${path}${token ? `${sep}page_token=${encodeURIComponent(token)}` : ''}`)
    token = body.pagination?.next_page_token ?? null
    if (!token) break
    page++
    last = { page, token }
  }
  if (!last.token) throw new Error(`${path} has a single page: no deep page to measure`)
  return last
}

export async function discover(url: string, m: Manifest): Promise<Found> {
  const [deepFeeds, deepEntries, deepTransactions] = [
    await deepToken(url, '/v1/feeds'),
    await deepToken(url, `/v1/feeds/${m.hot_feed_id}/entries`),
    await deepToken(url, '/v1/transactions'),
  ]
  const recent = await json(`${url}/v1/leaderboards/recent-entries?page_size=100`)
  const tx = (await json(`${url}/v1/transactions?page_size=1`)).data[0]
  const wallet = await json(`${url}/v1/wallets/${m.top_seller_wallet_id}`)
  const landing = await (await fetch(`${url}/`)).text()
  const assetVersion = /\/assets\/trellis\.js\?v=(\w+)/.exec(landing)?.[1]
  if (!assetVersion) throw new Error('the landing page names no versioned script')
  const reader = signer(signerKey(900))
  const opened = await fetch(`${url}/v1/auth/session`, { method: 'POST', headers: await authHeaders(url, reader) })
  const sessionCookie = opened.headers.getSetCookie()[0]?.split(';')[0]
  if (opened.status !== 200 || !sessionCookie) throw new Error(`no browser session: ${opened.status}`)
  const post = async (path: string, body: unknown) => {
    const answer = await fetch(`${url}${path}`, { method: 'POST', headers: await authHeaders(url, reader), body: JSON.stringify(body) })
    if (answer.status !== 201) throw new Error(`POST ${path} answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`)
    return (await answer.json()) as { id: string }
  }
  const feed = await post('/v1/feeds', { name: 'bench session reader' })
  const paid = await post(`/v1/feeds/${feed.id}/entries`, {
    content_base64: Buffer.alloc(1024, 'p').toString('base64'),
    mime_type: 'text/plain',
    is_free: false,
    price: { amount: '10000', currency: 'USDC' },
  })
  const free = await post(`/v1/feeds/${feed.id}/entries`, {
    content_base64: Buffer.alloc(1024, 'l').toString('base64'),
    mime_type: 'text/plain',
  })
  const link = (await post(`/v1/feeds/${feed.id}/entries/${free.id}/access-link`, {})) as unknown as { url: string }
  const mib = await post(`/v1/feeds/${feed.id}/entries`, {
    content_base64: Buffer.alloc(1024 * 1024, 'm').toString('base64'),
    mime_type: 'text/plain',
  })
  const pass = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000 }
  const offered = await fetch(`${url}/v1/feeds/${feed.id}/pass`, {
    method: 'PUT',
    headers: await authHeaders(url, reader),
    body: JSON.stringify(pass),
  })
  if (offered.status !== 200) throw new Error(`PUT a pass answered ${offered.status}`)
  const asked = await fetch(`${url}/v1/feeds/${feed.id}/pass/feed-url`, { method: 'POST', headers: await authHeaders(url, reader) })
  if (asked.status !== 200) throw new Error(`POST a pass feed URL answered ${asked.status}`)
  const passFeedPath = new URL(((await asked.json()) as { url: string }).url).pathname
  const studioHeaders = { ...(await authHeaders(url, reader)), origin: url, 'sec-fetch-site': 'same-origin' }
  const studied = await fetch(`${url}/v1/auth/studio`, { method: 'POST', headers: studioHeaders })
  if (studied.status !== 200) throw new Error(`POST /v1/auth/studio answered ${studied.status}`)
  const studio = {
    origin: url,
    cookie: studied.headers.getSetCookie()[0]!.split(';')[0]!,
    csrf: ((await studied.json()) as { csrf_token: string }).csrf_token,
    feed: `/studio/feeds/${feed.id}`,
    entry: `/studio/feeds/${feed.id}/entries/${paid.id}`,
  }
  return {
    studio,
    passFeed: feed.id,
    passFeedPath,
    passEnclosure: `${passFeedPath.replace(/\/feed\.xml$/, '')}/entries/${paid.id}/content`,
    sessionCookie,
    accessLink: new URL(link.url).pathname,
    ownPaid: `/v1/feeds/${feed.id}/entries/${paid.id}/content`,
    freeMiB: `/v1/feeds/${feed.id}/entries/${mib.id}/content`,
    assetVersion,
    deepFeeds,
    deepEntries,
    deepTransactions,
    recentPage2: recent.pagination.next_page_token,
    transaction: { id: tx.id, hash: tx.transaction_hash },
    walletAddress: wallet.wallet_address ?? wallet.address,
    topic: /<([^>]+)>; rel="self"/.exec((await fetch(`${url}/v1/feeds/${m.hot_feed_id}/feed.xml`)).headers.get('link') ?? '')?.[1] ?? '',
  }
}

const target = (name: string, path: string, group: ReadTarget['group'], expect = 200, request?: ReadTarget['request']): ReadTarget => ({
  name,
  path,
  group,
  expect,
  ...(request ? { request } : {}),
})

export function moreTargets(m: Manifest, f: Found): ReadTarget[] {
  const t = target
  const token = (value: string) => encodeURIComponent(value)
  const free = `/v1/feeds/${m.free_entry.feed_id}/entries/${m.free_entry.entry_id}`
  const cover = `/v1/feeds/${m.cover_image.feed_id}/image`
  return [
    t('GET leaderboards/recent-entries?page_size=100', '/v1/leaderboards/recent-entries?page_size=100', 'recent'),
    t(
      'GET recent-entries?page_size=100, page 2',
      `/v1/leaderboards/recent-entries?page_size=100&page_token=${token(f.recentPage2)}`,
      'recent',
    ),
    t('GET /v1/feeds/{id}/image (8 KiB PNG)', cover, 'image'),
    t('GET /v1/feeds/{id}/image, If-None-Match (304)', cover, 'image', 304, { headers: { 'if-none-match': `"${m.cover_image.cid}"` } }),
    t('GET free entry content (1 KiB)', `${free}/content`, 'other'),
    t('GET free entry content (1 MiB)', f.freeMiB, 'other'),
    // 16 connections, as the downloads measure: 50 × 37 MiB in flight is a test of the loopback, not of the route.
    {
      ...t(
        'GET free entry content (37 MiB), 16 connections',
        `/v1/feeds/${m.big_entry.feed_id}/entries/${m.big_entry.entry_id}/content`,
        'other',
      ),
      connections: 16,
    },
    t('GET free entry (JSON)', free, 'other'),
    t('GET /v1/feeds?page_size=100', '/v1/feeds?page_size=100', 'list'),
    // Search: a word of every feed's description and of every free text entry's body (the most hits there are), a
    // tag (about 1 in 12 entries), and a rare word (one feed's number) with a common one.
    t('GET /v1/search?q=benchmark', '/v1/search?q=benchmark', 'list'),
    t('GET /v1/search?q=tutorial&type=entry', '/v1/search?q=tutorial&type=entry', 'list'),
    t('GET /v1/search?q=feed+4242', '/v1/search?q=feed+4242', 'list'),
    t(`GET /v1/feeds page ${f.deepFeeds.page}`, `/v1/feeds?page_token=${token(f.deepFeeds.token)}`, 'list'),
    t(
      `GET /v1/feeds/{id}/entries page ${f.deepEntries.page}`,
      `/v1/feeds/${m.hot_feed_id}/entries?page_token=${token(f.deepEntries.token)}`,
      'list',
    ),
    t(`GET /v1/transactions page ${f.deepTransactions.page}`, `/v1/transactions?page_token=${token(f.deepTransactions.token)}`, 'list'),
    t('GET /v1/transactions?feed_id= (the hot feed)', `/v1/transactions?feed_id=${m.hot_feed_id}`, 'list'),
    t('GET /v1/feeds/{id}/pass', `/v1/feeds/${f.passFeed}/pass`, 'other'),
    t('POST /v1/feeds/{id}/pass/purchases (402)', `/v1/feeds/${f.passFeed}/pass/purchases`, 'challenge', 402, { method: 'POST' }),
    t('POST pass purchases as a browser (pass paywall, 402)', `/v1/feeds/${f.passFeed}/pass/purchases`, 'challenge', 402, {
      method: 'POST',
      headers: BROWSER,
    }),
    t('GET /v1/pass-feeds/{token}/feed.xml (private RSS)', f.passFeedPath, 'page'),
    t('GET /v1/pass-feeds/{token}/feed.atom', f.passFeedPath.replace(/xml$/, 'atom'), 'page'),
    t('GET /v1/pass-feeds/{token}/feed.json', f.passFeedPath.replace(/xml$/, 'json'), 'page'),
    t('GET /v1/pass-feeds/{token}/entries/{id}/content (paid, 1 KiB)', f.passEnclosure, 'other'),
    // Each open counts a use of the link, durably, before its bytes are sent (a commit per open, grouped per turn).
    t('GET /v1/access/{token} (counted open, 1 KiB)', f.accessLink, 'other'),
    t('GET /v1/transactions/{id}', `/v1/transactions/${f.transaction.id}`, 'other'),
    t('GET /v1/transactions/hash/{hash}', `/v1/transactions/hash/${f.transaction.hash}`, 'other'),
    t('GET /v1/wallets/{id}', `/v1/wallets/${m.top_seller_wallet_id}`, 'other'),
    t('GET /v1/wallets/address/{address}', `/v1/wallets/address/${f.walletAddress}`, 'other'),
    t('GET /v1/categories', '/v1/categories', 'other'),
    t('GET /v1/categories/{id}', `/v1/categories/${m.category_id}`, 'other'),
    t('GET /health', '/health', 'other'),
    t('GET /metrics', '/metrics', 'other'),
    t('GET /v1/openapi.json', '/v1/openapi.json', 'other'),
    t('GET /v1/docs', '/v1/docs', 'other'),
    t('GET /v1/docs/assets/swagger-ui.css', '/v1/docs/assets/swagger-ui.css', 'other'),
    t('GET /v1/docs/assets/swagger-ui-bundle.js', '/v1/docs/assets/swagger-ui-bundle.js', 'other'),
    // The pages (a browser's Accept and User-Agent where the answer depends on them).
    t('GET / (landing page)', '/', 'page'),
    t('GET /feeds/{id} (feed page)', `/feeds/${m.hot_feed_id}`, 'page'),
    t('GET /feeds/{id}/entries/{id} (free entry page)', `/feeds/${m.free_entry.feed_id}/entries/${m.free_entry.entry_id}`, 'other'),
    t('GET /feeds/{id}/entries/{id} (paywall page, 402)', `/feeds/${m.paid_entry.feed_id}/entries/${m.paid_entry.entry_id}`, 'other', 402),
    t(
      'GET paid content as a browser (paywall, 402)',
      `/v1/feeds/${m.paid_entry.feed_id}/entries/${m.paid_entry.entry_id}/content`,
      'challenge',
      402,
      { headers: BROWSER },
    ),
    t('GET /feeds (every feed, page 1)', '/feeds', 'page'),
    t('GET /feeds?sort=popular', '/feeds?sort=popular', 'page'),
    t('GET /categories/{id} (category page)', `/categories/${m.category_id}`, 'page'),
    t('GET /tags/{tag} (tag page)', `/tags/${encodeURIComponent(m.tag)}`, 'page'),
    t('GET /search?q= (search page)', '/search?q=benchmark', 'page'),
    t('GET /robots.txt', '/robots.txt', 'other'),
    t('GET /sitemap.xml', '/sitemap.xml', 'other'),
    t('GET /favicon.ico', '/favicon.ico', 'other'),
    t('GET /creators/{address}', `/creators/${f.walletAddress}`, 'other'),
    t('GET /leaderboards', '/leaderboards', 'other'),
    t('GET /leaderboards?period=7d', '/leaderboards?period=7d', 'other'),
    t('GET /assets/trellis.js', `/assets/trellis.js?v=${f.assetVersion}`, 'other'),
    t('GET /assets/content.js', `/assets/content.js?v=${f.assetVersion}`, 'other'),
    t('GET /assets/trellis.css', `/assets/trellis.css?v=${f.assetVersion}`, 'other'),
    t('GET /v1/docs/assets/explorer.js', '/v1/docs/assets/explorer.js', 'other'),
    t('GET /v1/feeds/{id}/feed.xml (RSS)', `/v1/feeds/${m.hot_feed_id}/feed.xml`, 'page'),
    t('GET /v1/feeds/{id}/feed.atom (Atom)', `/v1/feeds/${m.hot_feed_id}/feed.atom`, 'page'),
    t('GET /v1/feeds/{id}/feed.json (JSON Feed)', `/v1/feeds/${m.hot_feed_id}/feed.json`, 'page'),
    t('GET /.well-known/x402', '/.well-known/x402', 'other'),
    t('GET /discovery/resources', '/discovery/resources', 'other'),
    t('GET /discovery/resources?limit=100&offset=5000', '/discovery/resources?limit=100&offset=5000', 'other'),
    t('GET /x402/v2/discovery/resources (v2 list)', '/x402/v2/discovery/resources', 'other'),
    t('GET /discovery/resources?x402Version=2', '/discovery/resources?x402Version=2', 'other'),
    t('GET /.well-known/x402.json', '/.well-known/x402.json', 'other'),
    t('GET /openapi.json', '/openapi.json', 'other'),
    t('GET /.well-known/openapi.json', '/.well-known/openapi.json', 'other'),
    t('GET /llms.txt', '/llms.txt', 'other'),
    // MCP over Streamable HTTP: tools/list answered from its first answer; a tools/call of a reading tool kept until the
    // records change (src/mcp/http.ts), first made on one shared server through the app's handler.
    t('POST /mcp tools/list', '/mcp', 'other', 200, mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' })),
    t(
      'POST /mcp tools/call search_feeds (category and tag)',
      '/mcp',
      'other',
      200,
      mcp({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search_feeds', arguments: { category: m.category_id, tags: [m.tag] } },
      }),
    ),
    t('GET /v1/admin/takedowns (admin)', '/v1/admin/takedowns', 'other', 200, { headers: { 'admin-api-key': ADMIN_KEY } }),
    t('GET /v1/auth/session, no session (401)', '/v1/auth/session', 'other', 401),
    t('GET /v1/auth/session, a live session', '/v1/auth/session', 'other', 200, { headers: { cookie: f.sessionCookie } }),
    t('GET paid content (1 KiB) with a session cookie', f.ownPaid, 'other', 200, { headers: { cookie: f.sessionCookie } }),
    t('DELETE /v1/auth/session', '/v1/auth/session', 'write', 204, { method: 'DELETE' }),
    // The hub's own work (parse, topic, the callback's guard, two reads) with nothing to verify: an unsubscribe from
    // what is not subscribed, to a public address literal (no DNS, and no GET is ever sent to it).
    t('POST /v1/websub (unsubscribe, nothing to undo: 202)', '/v1/websub', 'other', 202, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        'hub.mode': 'unsubscribe',
        'hub.topic': f.topic,
        'hub.callback': 'https://1.1.1.1/websub-bench',
      }).toString(),
    }),
    ...studioTargets(f, t),
    t('POST /v1/auth/nonce', '/v1/auth/nonce', 'write', 200, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet_address: '0x000000000000000000000000000000000000bEEF' }),
    }),
  ]
}

/**
 * The studio's pages as its signed-in browser asks for them (a navigation: Sec-Fetch-Site), and its preview: private
 * pages made for one wallet on each request (never kept), so measured for their figures, not held to a shared page's.
 */
function studioTargets(f: Found, t = target): ReadTarget[] {
  const headers = { ...BROWSER, cookie: f.studio.cookie, 'sec-fetch-site': 'same-origin' }
  const page = (name: string, path: string) => t(name, path, 'other', 200, { headers })
  return [
    t('GET /studio (sign-in page)', '/studio', 'page', 200, { headers: BROWSER }),
    page('GET /studio (dashboard: charts, feeds)', '/studio'),
    page('GET /studio/feeds/{id}', f.studio.feed),
    page('GET /studio/feeds/{id}/entries/{id} (access links)', f.studio.entry),
    page('GET /studio/webhooks', '/studio/webhooks'),
    page('GET /studio/profile', '/studio/profile'),
    page('GET /studio/sales.csv', '/studio/sales.csv'),
    t('GET /v1/auth/studio', '/v1/auth/studio', 'other', 200, { headers }),
    t('POST /studio/preview (Markdown, 1 KiB)', '/studio/preview', 'other', 200, {
      method: 'POST',
      headers: { ...headers, origin: f.studio.origin, 'x-trellis-csrf': f.studio.csrf, 'content-type': 'text/markdown' },
      body: `# A title\n\n${'Some *words* and a [link](https://example.com). '.repeat(20)}`,
    }),
    t('GET /assets/studio.js', `/assets/studio.js?v=${f.assetVersion}`, 'other'),
    t('GET /assets/studio.css', `/assets/studio.css?v=${f.assetVersion}`, 'other'),
    t('GET /assets/studio-page.js', `/assets/studio-page.js?v=${f.assetVersion}`, 'other'),
  ]
}

/** How many pages (cursors) a spread list target walks, and the page sizes it asks for on each. */
const SPREAD_PAGES = 25
const SPREAD_SIZES = Array.from({ length: 20 }, (_, i) => 11 + i) // 11..30: 20.5 items a page on average

/**
 * The list pages as no cache can serve them: each request of a run names another page (up to 25 cursors from the
 * target's own page on, each at page sizes 11..30), so with the read memo off every request is read from the
 * records, and no two requests in flight are the same one (which the memo's single flight would answer once).
 */
export async function spreadOverPages(url: string, target: ReadTarget): Promise<ReadTarget> {
  const base = target.path.replace(/[?&]page_token=[^&]*/, '')
  const sep = base.includes('?') ? '&' : '?'
  let cursor = /[?&]page_token=([^&]*)/.exec(target.path)?.[1] ?? ''
  const cursors = [cursor]
  while (cursors.length < SPREAD_PAGES) {
    const next = (await json(`${url}${base}${cursor ? `${sep}page_token=${cursor}` : ''}`)).pagination?.next_page_token
    if (!next) break
    cursor = encodeURIComponent(next)
    cursors.push(cursor)
  }
  // A short listing has few cursors: every page size then (the pages are alike, the requests still distinct).
  const sizes = cursors.length >= 5 ? SPREAD_SIZES : Array.from({ length: 100 }, (_, i) => i + 1)
  const paths = cursors.flatMap((cursor) => sizes.map((size) => `${base}${sep}page_size=${size}${cursor ? `&page_token=${cursor}` : ''}`))
  return { ...target, name: `${target.name} (${paths.length} pages in turn)`, request: { ...target.request, paths } }
}
