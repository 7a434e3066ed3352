// The landing page: what this server is, where its API is, and what sells.
import type { Static } from '@sinclair/typebox'
import type { TopProviderItem } from '../models/leaderboard.ts'
import { html } from './html.ts'
import { page } from './layout.ts'
import { creatorAnchor, feedCards, tableHead, type FeedCard } from './cards.ts'
import { count, usdc } from './format.ts'

export interface HomeFacts {
  network: string
  /** Trending feeds, or the newest when nothing sold lately. */
  feeds: FeedCard[]
  feedsAreTrending: boolean
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
    html`<a class="button primary" href="/leaderboards">Leaderboards</a>`,
    html`<a class="button" href="/v1/docs">API explorer</a>`,
    html`<a class="button" href="/v1/openapi.json">OpenAPI document</a>`,
  ]}</div>
</section>
<h2>${f.feedsAreTrending ? 'Trending feeds' : 'Newest feeds'}</h2>
${f.feeds.length ? feedCards(f.feeds) : html`<p class="empty">No feeds yet. Create one with <code>POST /v1/feeds</code>.</p>`}
<h2>Top creators</h2>
${
  f.creators.length
    ? html`<table>
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
