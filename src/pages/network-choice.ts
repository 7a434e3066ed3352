// Where a paywall says which network a payment goes to: the one network, or a choice of those the server sells on
// (the page's script pays on the one chosen, and chooses first the one the wallet is on).
import type { Offer } from '../chain/x402/resource-server.ts'
import { html, type Html } from './html.ts'

export function networkFact(offer: Offer): Html {
  if (offer.choices.length < 2) return html`<dt>Network</dt><dd>${offer.requirement.network}</dd>`
  const options = offer.choices.map(
    (choice, at) => html`<option value="${String(at)}">${choice.label} (${choice.requirement.network})</option>`,
  )
  return html`<dt><label for="pay-network">Network</label></dt>
    <dd><select id="pay-network">${options}</select></dd>`
}
