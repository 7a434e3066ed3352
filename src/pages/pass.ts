// A feed's pass as a person meets it: the offer on the feed's page and beside an entry's paywall (a form that POSTs to
// the pass's purchase URL, so a browser gets the pass's own paywall), that paywall, and the line telling a holder
// signed in how long theirs runs (on the page made for that request only).
import type { FeedRecord, PassOfferRecord } from '../models/records.ts'
import type { Offer } from '../chain/x402/resource-server.ts'
import { spokenDuration } from '../lib/durations.ts'
import { html, type Html } from './html.ts'
import { networkFact } from './network-choice.ts'
import { page } from './layout.ts'
import { usdc } from './format.ts'
import { payWidget, type PaywallData } from './paywall.ts'

const terms = (offer: PassOfferRecord): string => `${usdc(offer.price)} for ${spokenDuration(offer.duration_s)}`
const purchaseUrl = (feedId: string) => `/v1/feeds/${feedId}/pass/purchases`

/** The button that buys the pass: a form, so it works before any script, and leads to the pass's paywall. */
const buyForm = (feed: FeedRecord, label: string): Html =>
  html`<form method="post" action="${purchaseUrl(feed.id)}" class="buy-pass"><button type="submit" class="primary">${label}</button></form>`

/**
 * The feed page's offer (or nothing while none is on sale), and, for a holder signed in, the line telling until when
 * their pass runs (`heldUntil`; shown alone when the feed sells no pass now).
 */
export function passOffer(feed: FeedRecord, heldUntil: number | null = null): Html {
  const held = heldUntil ? passHeldLine(heldUntil) : ''
  const offer = feed.pass
  if (!offer) return html`${held}`
  return html`<section class="pass" id="pass" aria-labelledby="pass-title">
  <h2 id="pass-title">Pass · ${terms(offer)}</h2>
  ${held}
  <p>Every paid entry of this feed, those published later too.</p>
  ${offer.description ? html`<p class="muted">${offer.description}</p>` : ''}
  ${buyForm(feed, `Buy the pass · ${usdc(offer.price)}`)}
</section>`
}

/** What a holder signed in reads on the feed's page. */
function passHeldLine(expiresAt: number): Html {
  const until = new Date(expiresAt * 1000).toISOString().slice(0, 16).replace('T', ' ')
  return html`<p class="held" id="pass-held" role="status">Your pass runs until ${until} UTC.</p>`
}

/** Beside an entry's paywall: the pass, when the feed sells one. */
export const passAside = (feed: FeedRecord): Html =>
  feed.pass
    ? html`<aside class="pass-aside"><p>Or read every paid entry of this feed with a pass: <strong>${terms(feed.pass)}</strong>.</p>
  ${buyForm(feed, 'Buy the pass')}</aside>`
    : html``

export interface PassPaywallFacts {
  feed: FeedRecord
  pass: PassOfferRecord
  offer: Offer
  creatorLink: Html
  assetVersion: string
}

/** The 402 of a pass for a person: what it gives, for how much, and the button that pays for it with the wallet. */
export function passPaywallPage(f: PassPaywallFacts): string {
  const title = `A ${spokenDuration(f.pass.duration_s)} pass to ${f.feed.name}`
  const price = usdc(f.pass.price)
  const data: PaywallData = { kind: 'paywall', ...f.offer, sold: 'pass', mimeType: 'application/json', title }
  return page(
    { title: `${title} (${price})`, network: f.offer.requirement.network, data, assetVersion: f.assetVersion },
    html`
<article class="paywall">
  <p class="kicker">Payment required · HTTP 402</p>
  <h1>${title}</h1>
  <p class="byline">for <a href="/feeds/${f.feed.id}">${f.feed.name}</a> by ${f.creatorLink}</p>
  <p class="description">Every paid entry of the feed, those published later too, for ${spokenDuration(f.pass.duration_s)} from
  when it is paid (from the end of the pass you hold, if one runs).</p>
  ${f.pass.description ? html`<p class="muted">${f.pass.description}</p>` : ''}
  <dl class="facts">
    <dt>Price</dt><dd class="price">${price}</dd>
    ${networkFact(f.offer)}
    <dt>Pay to</dt><dd><code>${f.offer.requirement.payTo}</code></dd>
  </dl>
  ${payWidget(price)}
</article>`,
  )
}
