// The feed forms of the studio: a new feed or an existing one's words, category and cover; and its pass.
import type { FeedRecord } from '../../models/records.ts'
import type { Category } from '../../models/category.ts'
import { html, type Html } from '../html.ts'
import { usdcDecimal } from '../../lib/money.ts'
import { checkbox, form, input, select, textarea } from './forms.ts'
import { cheapPriceHint, plainUsdc, type SettlementFacts } from '../../domain/cheap-prices.ts'

const DAY_S = 86_400

/** A drop zone for a file control: studio.js puts a dropped file into the control it names. */
export const dropZone = (controlId: string, text: string): Html =>
  html`<div class="drop" data-drop-for="${controlId}" aria-hidden="true">${text}</div>`

/** The fields a feed is made of; `feed` null for a new one. */
function feedFields(id: string, feed: FeedRecord | null, categories: Category[]): Html {
  const c = (name: string, label: string) => ({ form: id, name, label })
  const options = [{ value: '', label: 'No category' }, ...categories.map((k) => ({ value: k.id, label: k.name }))]
  return html`${input({ ...c('name', 'Name'), value: feed?.name, attributes: html` maxlength="255" autocomplete="off"` })}
${textarea({ ...c('description', 'Description'), value: feed?.description, empty: feed ? 'null' : 'omit' }, 3)}
${select({ ...c('category_id', 'Category'), value: feed?.category_id ?? '', empty: feed ? 'null' : 'omit' }, options)}
${input({ ...c('tags', 'Tags'), kind: 'tags', value: feed?.tags.join(', '), hint: 'separated by commas, at most 20' })}
<div class="cover-field">
${feed?.image_cid ? html`<img class="cover-now" src="/v1/feeds/${feed.id}/image" alt="The current cover">` : ''}
${input(
  {
    ...c('image_url', feed?.image_cid ? 'Replace the cover image' : 'Cover image'),
    kind: 'data-url',
    hint: 'PNG, JPEG, GIF, WebP or SVG, at most 10 MB',
  },
  'file',
)}
${dropZone(`${id}-image_url`, 'or drop an image here')}
</div>`
}

export const newFeedForm = (categories: Category[]): Html =>
  form(
    { id: 'new-feed', method: 'POST', action: '/v1/feeds', after: 'go:/studio/feeds/{id}', submit: 'Create the feed' },
    feedFields('new-feed', null, categories),
  )

export const editFeedForm = (feed: FeedRecord, categories: Category[]): Html =>
  form(
    { id: 'edit-feed', method: 'PATCH', action: `/v1/feeds/${feed.id}`, after: 'reload', submit: 'Save the feed' },
    feedFields('edit-feed', feed, categories),
  )

/** The pass: its price and how long it runs; on sale or not. Its hint names the network's settlement cost too. */
export function passForm(feed: FeedRecord, network: SettlementFacts): Html {
  const offer = feed.pass
  const c = (name: string, label: string) => ({ form: 'pass', name, label })
  return form(
    { id: 'pass', method: 'PUT', action: `/v1/feeds/${feed.id}/pass`, after: 'reload', submit: offer ? 'Change the pass' : 'Sell a pass' },
    html`${input(
      {
        ...c('price', 'Pass price (USDC)'),
        kind: 'usdc',
        value: offer ? usdcDecimal(offer.price).replace(/\.?0+$/, '') : '',
        hint:
          `e.g. 5 or 0.50; above about ${plainUsdc(network.typicalSettlementCost)} USDC, ` +
          `what settling one payment costs on ${network.label}`,
      },
      'text',
    )}
${input({ ...c('duration_s', 'Runs for (days)'), kind: 'days', value: offer ? String(offer.duration_s / DAY_S) : '30' })}
${textarea({ ...c('description', 'What the pass gives'), value: offer?.description, empty: 'null' }, 2)}`,
  )
}

/**
 * Whether an entry is free, its price, and when a paid one becomes free. The price's hint says what a sale costs to
 * settle on the network, before the creator prices below it (the API's answer warns after, studio.js shows it).
 */
export function priceFields(
  id: string,
  entry: { is_free: boolean; price: bigint; expires_at: number | null } | null,
  network: SettlementFacts,
): Html {
  const c = (name: string, label: string) => ({ form: id, name, label })
  const price = entry && !entry.is_free ? usdcDecimal(entry.price).replace(/\.?0+$/, '') : ''
  return html`${checkbox({ ...c('is_free', 'Free for everyone'), checked: entry ? entry.is_free : false })}
${input({
  ...c('price', 'Price (USDC)'),
  kind: 'usdc',
  value: price,
  hint: `for a paid entry, e.g. 0.25; ${cheapPriceHint(network)}`,
  empty: entry ? 'null' : 'omit',
  attributes: html` data-unless="is_free"`,
})}
${input(
  {
    ...c('expires_at', 'Free from (optional)'),
    kind: 'time',
    value: entry?.expires_at ? isoLocal(entry.expires_at) : '',
    empty: entry ? 'null' : 'omit',
    hint: 'a paid entry becomes free then (UTC)',
  },
  'datetime-local',
)}`
}

/** Unix seconds as a datetime-local value (UTC, to the minute). */
export const isoLocal = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 16)
