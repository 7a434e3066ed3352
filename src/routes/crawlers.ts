// What search engines and browsers ask every site for: robots.txt (the pages may be crawled; private and per-reader
// URLs not), sitemap.xml (the market's pages: home, listings, categories, every active feed and its creator) and
// /favicon.ico (the icon the pages name, for clients that ask the old path). All absolute URLs from the public URL.
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import { html } from '../pages/html.ts'
import { ASSETS } from '../pages/assets.ts'

/** A sitemap holds at most 50,000 URLs (sitemaps.org): the newest feeds first, should a market grow past it. */
const SITEMAP_URLS = 50_000
const BATCH = 500

async function sitemap(s: Services): Promise<string> {
  const origin = s.publicUrl()
  const paths = ['/', '/feeds', '/leaderboards']
  for (const category of await s.categories.list({ isActive: true, limit: 100 })) paths.push(`/categories/${category.id}`)
  const creators = new Set<string>()
  let beforeId: string | undefined
  while (paths.length + creators.size < SITEMAP_URLS) {
    const feeds = await s.feeds.list({ is_active: true, min_entries: 0, beforeId, limit: BATCH })
    for (const feed of feeds) {
      paths.push(`/feeds/${feed.id}`)
      creators.add(`/creators/${feed.owner_wallet_address}`)
    }
    if (feeds.length < BATCH) break
    beforeId = feeds[feeds.length - 1]!.id
  }
  const urls = [...paths, ...creators].slice(0, SITEMAP_URLS)
  return html`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.map((path) => html`<url><loc>${origin}${path}</loc></url>\n`)}</urlset>
`.text
}

export const crawlerRoutes = (s: Services) =>
  new Elysia({ detail: { hide: true } })
    .get(
      '/robots.txt',
      () =>
        new Response(
          [
            'User-agent: *',
            'Allow: /',
            // A reader's own URLs: access links, private pass feeds, receipts.
            'Disallow: /v1/access/',
            'Disallow: /v1/pass-feeds/',
            `Sitemap: ${s.publicUrl()}/sitemap.xml`,
            '',
          ].join('\n'),
          { headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=3600' } },
        ),
    )
    .get('/sitemap.xml', async () => {
      const body = await s.cached.get(
        'sitemap.xml',
        () => sitemap(s),
        (text) => 2 * text.length,
      )
      return new Response(body, { headers: { 'content-type': 'application/xml; charset=utf-8', 'cache-control': 'public, max-age=300' } })
    })
    .get(
      '/favicon.ico',
      () =>
        new Response(ASSETS['favicon.svg'].text, {
          headers: { 'content-type': ASSETS['favicon.svg'].type, 'cache-control': 'public, max-age=86400' },
        }),
    )
