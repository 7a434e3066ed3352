// The landing page: what this server is, where its API is, and what sells.
import type { Static } from '@sinclair/typebox'
import type { TopProviderItem } from '../models/leaderboard.ts'
import { html } from './html.ts'
import { page } from './layout.ts'
import { creatorAnchor, feedCards, tableHead, type FeedCard } from './cards.ts'
import { count, usdc } from './format.ts'
import { categoryLinks } from './browse.ts'
import type { CategoryRecord } from '../models/records.ts'

export interface HomeFacts {
  network: string
  /** The feeds that sold most in the last 7 days (none on a quiet market). */
  trending: FeedCard[]
  newest: FeedCard[]
  categories: CategoryRecord[]
  creators: Static<typeof TopProviderItem>[]
  assetVersion: string
}

export function homePage(f: HomeFacts): string {
  return page(
    {
      title: 'Feeds for sale',
      network: f.network,
      description: 'A content-feed marketplace: creators publish feeds of entries and sell paid entries for USDC over HTTP 402.',
      assetVersion: f.assetVersion,
    },
    html`
<section class="intro">
  <h1>Trellis</h1>
  <p>A marketplace of content feeds. Creators sign in with an Ethereum wallet and publish feeds of entries: text, JSON,
  images, audio, video and PDF. Paid entries are bought for USDC on <strong>${f.network}</strong> over HTTP 402 (x402),
  from this page with a browser wallet or from any x402 client.</p>
  <div class="links">${[
    html`<a class="button primary" href="/feeds">Browse the feeds</a>`,
    html`<a class="button" href="/leaderboards">Leaderboards</a>`,
    html`<a class="button" href="/v1/docs">API explorer</a>`,
    html`<a class="button" href="/v1/openapi.json">OpenAPI document</a>`,
  ]}</div>
</section>
${f.trending.length ? html`<h2>Trending feeds</h2>${feedCards(f.trending)}` : ''}
<h2>Newest feeds</h2>
${f.newest.length ? feedCards(f.newest) : html`<p class="empty">No feeds yet. Create one with <code>POST /v1/feeds</code>.</p>`}
${f.newest.length ? html`<p class="more"><a class="button" href="/feeds">All feeds</a></p>` : ''}
${f.categories.length ? html`<h2>Categories</h2>${categoryLinks(f.categories, null)}` : ''}
<h2>Top creators</h2>
${
  f.creators.length
    ? html`<table tabindex="0">
  ${tableHead(['#', 'Creator'], ['Feeds', 'Entries', 'Sales', 'Revenue'])}
  <tbody>${f.creators.map(
    (c) =>
      html`<tr>${[
        html`<td>${c.rank}</td>`,
        html`<td>${creatorAnchor(c.wallet_address, c.username)}</td>`,
        html`<td class="num">${count(c.total_feeds)}</td>`,
        html`<td class="num">${count(c.total_entries)}</td>`,
        html`<td class="num">${count(c.total_purchases)}</td>`,
        html`<td class="num">${usdc(c.total_revenue)}</td>`,
      ]}</tr>`,
  )}</tbody>
</table>`
    : html`<p class="empty">No sales yet.</p>`
}`,
  )
}
