// Pieces several pages show: a feed as a card, a row of tags, a set of figures.
import { html, type Html } from './html.ts'
import { count, usdc } from './format.ts'
import { creatorName } from './names.ts'

export interface FeedCard {
  id: string
  name: string
  description: string | null
  image_cid: string | null
  owner_wallet: string
  owner_username: string | null
  total_entries: number | string
  total_revenue: string
  tags?: string[]
}

/** A feed's cover on its card: decorative (the title beside it is the link a reader follows). */
const cover = (f: FeedCard): Html | string => (f.image_cid ? html`<img src="/v1/feeds/${f.id}/image" alt="" loading="lazy">` : '')

export const feedCards = (feeds: FeedCard[]): Html =>
  html`<ul class="cards">${feeds.map(
    (f) => html`
  <li class="card">
    <a class="cover" href="/feeds/${f.id}" tabindex="-1" aria-hidden="true">${cover(f)}</a>
    <div class="body">
      <h3><a href="/feeds/${f.id}">${f.name}</a></h3>
      <p class="muted">by ${creatorAnchor(f.owner_wallet, f.owner_username)}</p>
      ${f.description ? html`<p>${clip(f.description, 140)}</p>` : ''}
      ${f.tags ? tagList(f.tags.slice(0, 5)) : ''}
      <p class="muted">${count(f.total_entries)} entries · ${usdc(f.total_revenue)} earned</p>
    </div>
  </li>`,
  )}</ul>`

/** A link to a creator's page, under their name. */
export const creatorAnchor = (address: string, username: string | null): Html =>
  html`<a href="/creators/${address}">${creatorName({ username, address })}</a>`

const heading = (title: string) => html`<th>${title}</th>`
const numberHeading = (title: string) => html`<th class="num">${title}</th>`

/** A table's head: columns of text, then columns of numbers. */
export const tableHead = (text: string[], numbers: string[]): Html =>
  html`<thead><tr>${text.map(heading)}${numbers.map(numberHeading)}</tr></thead>`

/** A feed's tags, each a link to the feeds that carry it. */
export const tagList = (tags: string[]): Html =>
  tags.length ? html`<ul class="tags">${tags.map((t) => html`<li><a href="/tags/${encodeURIComponent(t)}">${t}</a></li>`)}</ul>` : html``

export const figures = (items: [label: string, value: string][]): Html =>
  html`<div class="figures">${items.map(([label, value]) => html`<div><strong>${value}</strong><span>${label}</span></div>`)}</div>`

/** At most `length` characters, cut at a word when one ends near. */
export function clip(text: string, length: number): string {
  if (text.length <= length) return text
  const cut = text.slice(0, length)
  const space = cut.lastIndexOf(' ')
  return `${space > length * 0.6 ? cut.slice(0, space) : cut}…`
}
