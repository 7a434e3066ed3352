// The leaderboards page: feeds by revenue and by sales, creators by revenue, categories — all periods as the API has them.
import type { Static } from '@sinclair/typebox'
import type { CategoryStatsItem, MostPopularItem, TopProviderItem, TopRevenueItem } from '../models/leaderboard.ts'
import { html } from './html.ts'
import { page } from './layout.ts'
import { count, usdc } from './format.ts'
import { creatorAnchor, tableHead } from './cards.ts'

export const PAGE_PERIODS = [
  ['1d', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['all', 'All time'],
] as const
export type PagePeriod = (typeof PAGE_PERIODS)[number][0]

export interface BoardsFacts {
  network: string
  period: PagePeriod
  topRevenue: Static<typeof TopRevenueItem>[]
  mostPopular: Static<typeof MostPopularItem>[]
  topProviders: Static<typeof TopProviderItem>[]
  categories: Static<typeof CategoryStatsItem>[]
  assetVersion: string
}

type FeedItem = Pick<
  Static<typeof TopRevenueItem>,
  'rank' | 'feed_id' | 'feed_name' | 'owner_wallet' | 'owner_username' | 'total_purchases' | 'unique_buyers' | 'total_revenue'
>
const feedRows = (items: FeedItem[]) => html`<table tabindex="0">
  ${tableHead(['#', 'Feed', 'Creator'], ['Sales', 'Buyers', 'Revenue'])}
  <tbody>${items.map(
    (f) =>
      html`<tr>${[
        html`<td>${f.rank}</td>`,
        html`<td><a href="/feeds/${f.feed_id}">${f.feed_name}</a></td>`,
        html`<td>${creatorAnchor(f.owner_wallet, f.owner_username)}</td>`,
        html`<td class="num">${count(f.total_purchases)}</td>`,
        html`<td class="num">${count(f.unique_buyers)}</td>`,
        html`<td class="num">${usdc(f.total_revenue)}</td>`,
      ]}</tr>`,
  )}</tbody>
</table>`

const none = html`<p class="empty">Nothing in this period.</p>`

export function boardsPage(f: BoardsFacts): string {
  return page(
    { title: 'Leaderboards', network: f.network, assetVersion: f.assetVersion },
    html`
<h1>Leaderboards</h1>
<nav class="links">${PAGE_PERIODS.map(([period, label]) =>
      period === f.period
        ? html`<span class="button primary">${label}</span>`
        : html`<a class="button" href="/leaderboards?period=${period}">${label}</a>`,
    )}</nav>
<h2>Top revenue</h2>
${f.topRevenue.length ? feedRows(f.topRevenue) : none}
<h2>Most popular</h2>
${f.mostPopular.length ? feedRows(f.mostPopular) : none}
<h2>Top creators</h2>
${
  f.topProviders.length
    ? html`<table tabindex="0">
  ${tableHead(['#', 'Creator'], ['Feeds', 'Sales', 'Buyers', 'Revenue'])}
  <tbody>${f.topProviders.map(
    (c) =>
      html`<tr>${[
        html`<td>${c.rank}</td>`,
        html`<td>${creatorAnchor(c.wallet_address, c.username)}</td>`,
        html`<td class="num">${count(c.total_feeds)}</td>`,
        html`<td class="num">${count(c.total_purchases)}</td>`,
        html`<td class="num">${count(c.unique_buyers)}</td>`,
        html`<td class="num">${usdc(c.total_revenue)}</td>`,
      ]}</tr>`,
  )}</tbody>
</table>`
    : none
}
<h2>Categories</h2>
${
  f.categories.length
    ? html`<table tabindex="0">
  ${tableHead(['Category'], ['Feeds', 'Creators', 'Entries', 'Sales', 'Revenue'])}
  <tbody>${f.categories.map(
    (c) =>
      html`<tr>${[
        html`<td>${c.category_name}</td>`,
        html`<td class="num">${count(c.total_feeds)}</td>`,
        html`<td class="num">${count(c.total_providers)}</td>`,
        html`<td class="num">${count(c.total_entries)}</td>`,
        html`<td class="num">${count(c.total_purchases)}</td>`,
        html`<td class="num">${usdc(c.total_revenue)}</td>`,
      ]}</tr>`,
  )}</tbody>
</table>`
    : none
}`,
  )
}
