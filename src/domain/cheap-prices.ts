// Cheap prices made visible: a price below what one settlement typically costs on the server's network loses money at
// every sale (each `exact` payment is its own transaction, whose gas the seller's facilitator or relayer pays), so
// publishing or repricing at such a price answers as usual and says so. It is a warning, never a refusal: the cost is
// an estimate (config/networks.ts), and a creator may price low on purpose. A pass is the answer for micro-prices:
// one settlement buys every paid entry of a feed for its duration.
import { usdcDecimal } from '../lib/money.ts'
import type { PriceWarning } from '../models/entry.ts'

/** The answer header carrying the warning (see warningHeader for its syntax, docs/api.md for why a header). */
export const WARNING_HEADER = 'Trellis-Warning'

/** The network facts the warning reads (config NetworkInfo has them). */
export interface SettlementFacts {
  name: string
  label: string
  typicalSettlementCost: bigint
}

/** Of the networks sold on, the one where settling costs most: a price that covers it covers every sale. */
export const costliest = <N extends SettlementFacts>(networks: readonly N[]): N =>
  networks.reduce((most, one) => (one.typicalSettlementCost > most.typicalSettlementCost ? one : most))

/** "0.0014": USDC without trailing zeros, as people write it. */
export const plainUsdc = (amount: bigint) => usdcDecimal(amount).replace(/\.?0+$/, '')

/** The sentence under a price field: the network's typical settlement cost, and a pass as the answer. */
export const cheapPriceHint = (network: SettlementFacts) =>
  `a price below about ${plainUsdc(network.typicalSettlementCost)} USDC costs more to settle on ${network.label} than it ` +
  'brings: sell a pass instead'

/** What is warned about: an entry (a pass is the answer), or a pass itself (priced to carry many entries). */
const ADVICE = {
  entry: ['This entry', 'Sell a pass instead (one payment for every paid entry of the feed).'],
  pass: ['This pass', 'A pass sells many entries for one payment: price it above that cost.'],
} as const

/** The warning for an entry or a pass sold at `price`, or null when the price covers the settlement cost. */
export function cheapPriceWarning(price: bigint, network: SettlementFacts, sold: keyof typeof ADVICE): PriceWarning | null {
  if (price <= 0n || price >= network.typicalSettlementCost) return null
  const [what, advice] = ADVICE[sold]
  return {
    code: 'price_below_settlement_cost',
    // ASCII only: the same words go into a header.
    message:
      `${what} costs ${plainUsdc(price)} USDC, below about ${plainUsdc(network.typicalSettlementCost)} USDC, what settling one ` +
      `payment typically costs on ${network.label}: each sale costs more to settle than it brings. ${advice}`,
    settlement_cost: network.typicalSettlementCost.toString(),
    network: network.name,
  }
}

/**
 * The header's value: an RFC 8941 structured-field item, the code as a token with the cost, the network and the message
 * as parameters (`price_below_settlement_cost;cost=1400;network="base";message="…"`): a program reads the code and the
 * figure without parsing prose, a person reads the message; RFC 7234's `Warning` header (obsoleted by RFC 9111) is
 * not reused.
 */
export const warningHeader = (w: PriceWarning): string =>
  `${w.code};cost=${w.settlement_cost};network=${quoted(w.network)};message=${quoted(w.message)}`

const quoted = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/** The warning as the answer's header, or no header. */
export const warningHeaders = (w: PriceWarning | null): Record<string, string> => (w ? { [WARNING_HEADER]: warningHeader(w) } : {})
