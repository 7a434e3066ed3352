// An entry in the studio: its words and price (the content never changes), and its access links — made with an
// expiry and a number of uses, copied, listed with how often they were used, revoked.
import type { AccessLinkRecord, EntryRecord, FeedRecord } from '../../models/records.ts'
import { html, type Html } from '../html.ts'
import { count, day, mediaKind, usdc } from '../format.ts'
import { actionButton, form, input, textarea } from './forms.ts'
import { priceFields } from './feed-forms.ts'
import type { SettlementFacts } from '../../domain/cheap-prices.ts'

const WEEK_S = 7 * 86_400

function editEntryForm(feed: FeedRecord, entry: EntryRecord, network: SettlementFacts): Html {
  const id = 'edit-entry'
  const c = (name: string, label: string) => ({ form: id, name, label })
  return form(
    { id, method: 'PATCH', action: `/v1/feeds/${feed.id}/entries/${entry.id}`, after: 'reload', submit: 'Save the entry' },
    html`${input({ ...c('title', 'Title'), value: entry.title, empty: 'null', attributes: html` maxlength="500"` })}
${textarea({ ...c('description', 'Description'), value: entry.description, empty: 'null' }, 3)}
${input({ ...c('tags', 'Tags'), kind: 'tags', value: entry.tags.join(', '), hint: 'separated by commas' })}
${priceFields(id, entry, network)}`,
  )
}

function newLinkForm(feed: FeedRecord, entry: EntryRecord, now: number): Html {
  const id = 'new-link'
  const c = (name: string, label: string) => ({ form: id, name, label })
  const inAWeek = new Date((now + WEEK_S) * 1000).toISOString().slice(0, 16)
  return form(
    {
      id,
      method: 'POST',
      action: `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`,
      after: 'show:access_url',
      submit: 'Make an access link',
    },
    html`${input({ ...c('expires_at', 'Expires (UTC)'), kind: 'time', value: inAWeek }, 'datetime-local')}
${input({ ...c('max_uses', 'Uses at most'), kind: 'int', hint: 'empty: unlimited', attributes: html` inputmode="numeric"` })}
${input({ ...c('description', 'Note (for you)'), attributes: html` maxlength="1000"` })}`,
  )
}

function linkRows(links: AccessLinkRecord[], now: number): Html {
  if (links.length === 0) return html`<p class="empty">No access link yet.</p>`
  const state = (l: AccessLinkRecord) =>
    !l.is_active ? 'Revoked' : l.expires_at <= now ? 'Expired' : l.max_uses !== null && l.current_uses >= l.max_uses ? 'Used up' : 'Live'
  return html`<table class="access-links" tabindex="0"><thead><tr><th>Note</th><th>State</th><th class="num">Uses</th><th>Expires</th>
<th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${links.map(
    (l) => html`<tr data-link="${l.id}"><td>${l.description ?? html`<span class="muted">none</span>`}</td>
<td class="link-state">${state(l)}</td>
<td class="num">${count(l.current_uses)}${l.max_uses === null ? '' : ` of ${count(l.max_uses)}`}</td><td>${day(l.expires_at)}</td>
<td>${l.last_used_at ? day(l.last_used_at) : '—'}</td><td>${
      l.is_active
        ? actionButton({
            label: 'Revoke',
            name: `Revoke the access link ${l.description ?? l.id}`,
            method: 'DELETE',
            action: `/v1/access-links/${l.id}`,
            after: 'reload',
            confirm: 'Revoke this access link? Whoever holds it can no longer read the entry.',
          })
        : ''
    }</td></tr>`,
  )}</tbody></table>`
}

export function entryStudioPage(
  feed: FeedRecord,
  entry: EntryRecord,
  links: AccessLinkRecord[],
  now: number,
  network: SettlementFacts,
): Html {
  return html`<p class="kicker"><a href="/studio">Studio</a> › <a href="/studio/feeds/${feed.id}">${feed.name}</a> › Entry</p>
<h1>${entry.title ?? 'Untitled'}</h1>
<div class="figures"><div><strong>${mediaKind(entry.mime_type)}</strong><span>${entry.mime_type}</span></div>
<div><strong>${count(entry.total_purchases)}</strong><span>sales</span></div><div><strong>${usdc(entry.total_revenue)}</strong>
<span>revenue</span></div></div>
<p class="links"><a href="/feeds/${feed.id}/entries/${entry.id}">See its public page</a></p>
<div class="studio-columns">
<section aria-labelledby="edit-heading" class="panel"><h2 id="edit-heading">The entry</h2>
<p class="muted">The content never changes: publish a new entry for new content.</p>${editEntryForm(feed, entry, network)}</section>
<section aria-labelledby="links-heading" class="panel"><h2 id="links-heading">Access links</h2>
<p class="muted">A link that opens this entry without paying, for a reviewer or a friend.</p>${newLinkForm(feed, entry, now)}</section>
</div>
<section aria-labelledby="links-list-heading"><h2 id="links-list-heading">Links made</h2>${linkRows(links, now)}</section>`
}
