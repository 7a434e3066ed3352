// The 402 a person sees: what is for sale, from whom, for how much, and a button that pays with the wallet in the
// browser (EIP-1193). The page's script signs the same EIP-3009 authorization an x402 client would, sends it in
// X-PAYMENT to the URL that was asked for, and shows what the payment bought.
import type { EntryRecord, FeedRecord, WalletRecord } from '../models/records.ts'
import type { Offer } from '../chain/x402/resource-server.ts'
import { html, type Html } from './html.ts'
import { networkFact } from './network-choice.ts'
import { mediaKind, shortAddress, usdc } from './format.ts'
import { creatorName, entryTitle } from './names.ts'
import { page } from './layout.ts'
import { passAside } from './pass.ts'
import { entryCard } from './feed.ts'

export interface PaywallFacts {
  feed: FeedRecord
  entry: EntryRecord
  creator: WalletRecord | null
  /** What the URL asked for (its record or its bytes) costs, as the script pays it. */
  offer: Offer
  /** What the URL serves once paid: the entry's record (with a link to its bytes) or the bytes themselves. */
  sold: 'record' | 'bytes'
  origin: string
  assetVersion: string
}

/** What the page's script needs to pay and to show the result. */
export interface PaywallData extends Offer {
  kind: 'paywall'
  /** A pass is bought with a POST, and answers the pass (JSON). */
  sold: 'record' | 'bytes' | 'pass'
  mimeType: string
  title: string
}

export function paywallPage(f: PaywallFacts): string {
  const title = entryTitle(f.entry)
  const price = usdc(f.entry.price)
  const data: PaywallData = { kind: 'paywall', ...f.offer, sold: f.sold, mimeType: f.entry.mime_type, title }
  return page(
    {
      title: `${title} (${price})`,
      network: f.offer.requirement.network,
      description: f.entry.description ?? undefined,
      data,
      assetVersion: f.assetVersion,
      origin: f.origin,
      card: entryCard(f.feed, f.entry),
    },
    html`
<article class="paywall">
  <p class="kicker">Payment required · HTTP 402</p>
  <h1>${title}</h1>
  <p class="byline">in <a href="/feeds/${f.feed.id}">${f.feed.name}</a> by ${creatorLink(f.feed, f.creator)}</p>
  ${f.entry.description ? html`<p class="description">${f.entry.description}</p>` : ''}
  <dl class="facts">
    <dt>Price</dt><dd class="price">${price}</dd>
    ${networkFact(f.offer)}
    <dt>Content</dt><dd>${mediaKind(f.entry.mime_type)} <span class="muted">(${f.entry.mime_type})</span></dd>
    <dt>Pay to</dt><dd><code>${f.offer.requirement.payTo}</code></dd>
  </dl>
  ${payWidget(price)}
  <p class="signed-in-already">Already bought it, or hold a pass to this feed?
    <button type="button" id="paywall-sign-in" hidden>Sign in with your wallet</button></p>
  ${passAside(f.feed)}
  <noscript><p class="status">${[
    html`Paying from this page needs JavaScript and a browser wallet. `,
    html`API clients pay with the X-PAYMENT header (see <a href="/v1/docs">the API</a>).`,
  ]}</p></noscript>
</article>`,
  )
}

/** The paywall's button, the status line the script speaks in, and where what was bought is shown. */
export const payWidget = (price: string): Html => html`<div class="pay">
    <button type="button" id="pay" class="primary" disabled>Pay ${price} with your wallet</button>
    <p class="status" id="status" role="status">Looking for a wallet in this browser…</p>
  </div>
  <div id="bought" class="bought" hidden></div>`

export const creatorLink = (feed: FeedRecord, creator: WalletRecord | null): Html =>
  html`<a href="/creators/${feed.owner_wallet_address}">${creator ? creatorName(creator) : shortAddress(feed.owner_wallet_address)}</a>`
