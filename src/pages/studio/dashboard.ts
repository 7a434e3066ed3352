// The studio's first page: the business at a glance (totals and charts over a range the creator picks), the feeds
// with their figures, and a form for a new feed.
import type { Analytics } from '../../models/analytics.ts'
import type { Category } from '../../models/category.ts'
import type { FeedRecord } from '../../models/records.ts'
import { ANALYTICS_INTERVALS } from '../../models/analytics.ts'
import { html, type Html } from '../html.ts'
import { count, day, usdc } from '../format.ts'
import { analyticsCharts } from './charts.ts'
import { newFeedForm } from './feed-forms.ts'

export interface Dashboard {
  analytics: Analytics | null
  /** The range as asked (YYYY-MM-DD), for the form. */
  range: { from: string; to: string; interval: string }
  feeds: FeedRecord[]
  categories: Category[]
}

function rangeForm(d: Dashboard): Html {
  return html`<form class="range" method="get" action="/studio">
<div class="field"><label for="range-from">From</label><input id="range-from" name="from" type="date" value="${d.range.from}"></div>
<div class="field"><label for="range-to">To</label><input id="range-to" name="to" type="date" value="${d.range.to}"></div>
<div class="field"><label for="range-interval">By</label><select id="range-interval" name="interval">${ANALYTICS_INTERVALS.map(
    (i) => html`<option value="${i}"${i === d.range.interval ? html` selected` : ''}>${i}</option>`,
  )}</select></div>
<button type="submit">Show</button>
<a class="button" href="/studio/sales.csv?from=${d.range.from}&amp;to=${d.range.to}" download>Sales as CSV</a>
</form>`
}

function feedRows(feeds: FeedRecord[]): Html {
  if (feeds.length === 0) return html`<p class="empty">No feed yet: create your first one below.</p>`
  return html`<table class="studio-feeds" tabindex="0"><thead><tr><th>Feed</th><th>State</th><th class="num">Entries</th>
<th class="num">Sales</th>
<th class="num">Revenue</th><th>Created</th></tr></thead><tbody>${feeds.map(
    (f) => html`<tr><td><a class="title" href="/studio/feeds/${f.id}">${f.name}</a></td>
<td>${f.is_active ? (f.pass ? 'On sale, with a pass' : 'On sale') : html`<span class="badge">Deleted</span>`}</td>
<td class="num">${count(f.total_entries)}</td><td class="num">${count(f.total_purchases)}</td><td class="num">${usdc(f.total_revenue)}</td>
<td>${day(f.created_at)}</td></tr>`,
  )}</tbody></table>`
}

export function dashboardPage(d: Dashboard): Html {
  return html`<h1>Your studio</h1>
<section aria-labelledby="sales-heading"><h2 id="sales-heading">Sales</h2>
${rangeForm(d)}
${d.analytics ? analyticsCharts(d.analytics) : html`<p class="empty">Nothing sold yet.</p>`}
</section>
<section aria-labelledby="feeds-heading"><h2 id="feeds-heading">Your feeds</h2>${feedRows(d.feeds)}</section>
<section aria-labelledby="new-feed-heading" class="panel"><h2 id="new-feed-heading">New feed</h2>${newFeedForm(d.categories)}</section>`
}
