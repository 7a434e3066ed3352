// A feed in the studio: its words and cover, deleting or reactivating it, its pass, publishing an entry (a file
// dropped or chosen, sent with a progress bar; or Markdown written with a live preview), and its entries.
import type { Category } from '../../models/category.ts'
import type { EntryRecord, FeedRecord } from '../../models/records.ts'
import { MAX_CONTENT_BYTES, SUPPORTED_MIME_TYPES } from '../../models/entry.ts'
import { html, type Html } from '../html.ts'
import { count, day, mediaKind, usdc } from '../format.ts'
import { actionButton, form, input, select, textarea } from './forms.ts'
import { dropZone, editFeedForm, passForm, priceFields } from './feed-forms.ts'
import type { SettlementFacts } from '../../domain/cheap-prices.ts'

const MIB = 1024 * 1024
const FILE_HINT = `text, Markdown, HTML, JSON, an image, audio, video or PDF; at most ${(MAX_CONTENT_BYTES / MIB).toFixed(1)} MiB`

function publishForm(feed: FeedRecord, network: SettlementFacts): Html {
  const id = 'publish'
  const c = (name: string, label: string) => ({ form: id, name, label })
  const types = [{ value: '', label: "The file's own type" }, ...SUPPORTED_MIME_TYPES.map((t) => ({ value: t, label: t }))]
  return form(
    {
      id,
      method: 'POST',
      action: `/v1/feeds/${feed.id}/entries`,
      after: 'reload',
      encode: 'multipart',
      submit: 'Publish',
      className: 'publish',
    },
    html`<fieldset class="content-choice"><legend>Content</legend>
${input({ ...c('content', 'A file'), kind: 'file', hint: FILE_HINT }, 'file')}
${dropZone(`${id}-content`, 'or drop a file here')}
${textarea({ ...c('markdown', 'or write Markdown'), kind: 'markdown', attributes: html` spellcheck="true"` }, 10)}
<div class="preview-box"><p class="kicker">Preview</p><div class="prose preview" id="publish-preview" aria-live="polite"></div></div>
${select(c('mime_type', 'Type'), types)}
</fieldset>
${input({ ...c('title', 'Title'), attributes: html` maxlength="500"` })}
${textarea(c('description', 'Description'), 2)}
${input({ ...c('tags', 'Tags'), kind: 'tags', hint: 'separated by commas' })}
${priceFields(id, null, network)}
<div class="progress" id="publish-progress" hidden><label for="publish-bar">Uploading</label>
<progress id="publish-bar" max="100" value="0"></progress><span id="publish-percent">0%</span></div>`,
  )
}

function entryRows(feed: FeedRecord, entries: EntryRecord[]): Html {
  if (entries.length === 0) return html`<p class="empty">No entry yet: publish the first one above.</p>`
  return html`<table class="studio-entries" tabindex="0"><thead><tr><th>Entry</th><th>Type</th><th class="num">Price</th>
<th class="num">Sales</th>
<th class="num">Revenue</th><th>Published</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${entries.map(
    (e) => html`<tr><td><a class="title" href="/studio/feeds/${feed.id}/entries/${e.id}">${e.title ?? 'Untitled'}</a></td>
<td>${mediaKind(e.mime_type)}</td><td class="num">${e.is_free ? html`<span class="badge free">Free</span>` : usdc(e.price)}</td>
<td class="num">${count(e.total_purchases)}</td><td class="num">${usdc(e.total_revenue)}</td><td>${day(e.created_at)}</td>
<td>${actionButton({
      label: 'Delete',
      name: `Delete ${e.title ?? 'the untitled entry'}`,
      method: 'DELETE',
      action: `/v1/feeds/${feed.id}/entries/${e.id}`,
      after: 'reload',
      confirm: 'Delete this entry? Its buyers keep reading it; nobody can buy it any more.',
    })}</td></tr>`,
  )}</tbody></table>`
}

function stateSection(feed: FeedRecord): Html {
  const feedPath = `/v1/feeds/${feed.id}`
  if (!feed.is_active)
    return html`<p class="notice">This feed is deleted: nobody can find or buy it.
${actionButton({ label: 'Reactivate the feed', method: 'PATCH', action: feedPath, after: 'reload', body: { is_active: true } })}</p>`
  return html`<p class="links"><a href="/feeds/${feed.id}">See its public page</a>
${actionButton({
  label: 'Delete the feed',
  method: 'DELETE',
  action: `/v1/feeds/${feed.id}`,
  after: 'reload',
  confirm: 'Delete this feed and its entries? Buyers keep what they bought; you can reactivate it later.',
})}</p>`
}

const stopPass = (feed: FeedRecord) =>
  actionButton({
    label: 'Stop selling the pass',
    method: 'DELETE',
    action: `/v1/feeds/${feed.id}/pass`,
    after: 'reload',
    confirm: 'Stop selling this pass? Passes sold keep running.',
  })

export function feedStudioPage(feed: FeedRecord, entries: EntryRecord[], categories: Category[], network: SettlementFacts): Html {
  return html`<p class="kicker"><a href="/studio">Studio</a> › Feed</p>
<h1>${feed.name}</h1>
${stateSection(feed)}
<div class="studio-columns">
<section aria-labelledby="edit-heading" class="panel"><h2 id="edit-heading">The feed</h2>${editFeedForm(feed, categories)}</section>
<section aria-labelledby="pass-heading" class="panel"><h2 id="pass-heading">Pass</h2>
<p class="muted">A pass opens every paid entry of this feed, later ones too, for as long as it runs.</p>
${feed.is_active ? passForm(feed, network) : html`<p class="muted">Reactivate the feed to sell a pass.</p>`}
${feed.pass ? stopPass(feed) : ''}
</section>
</div>
${
  feed.is_active
    ? html`<section aria-labelledby="publish-heading" class="panel">
<h2 id="publish-heading">Publish an entry</h2>${publishForm(feed, network)}</section>`
    : ''
}
<section aria-labelledby="entries-heading"><h2 id="entries-heading">Entries</h2>${entryRows(feed, entries)}</section>`
}
