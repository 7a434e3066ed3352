import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, Text, UnixSeconds } from './common.ts'
import { Price, PriceWarning } from './entry.ts'

/** A pass lasts from a minute (an agent's) to a year. */
export const PASS_MIN_DURATION_S = 60
export const PASS_MAX_DURATION_S = 31_536_000

export const PassOffer = t.Object(
  {
    feed_id: t.String({ description: 'UUID' }),
    price: t.Object({ amount: Money(), currency: t.Literal('USDC') }),
    duration_s: t.Integer({ description: 'how long a pass bought now runs, in seconds' }),
    description: Nullable(t.String()),
    is_active: t.Boolean({ description: 'on sale' }),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
    price_warning: t.Optional(PriceWarning),
  },
  { description: "A feed's pass on sale: every paid entry of the feed, those published later too, for duration_s" },
)
export type PassOffer = Static<typeof PassOffer>

export const PutPass = t.Object(
  {
    price: Price,
    duration_s: t.Integer({
      minimum: PASS_MIN_DURATION_S,
      maximum: PASS_MAX_DURATION_S,
      description: `seconds, ${PASS_MIN_DURATION_S} (a minute) to ${PASS_MAX_DURATION_S} (a year)`,
    }),
    description: t.Optional(Nullable(Text({ maxLength: 2000 }))),
  },
  { 'x-field-codes': { price: 'INVALID_PRICE', duration_s: 'INVALID_DURATION' } },
)
export type PutPass = Static<typeof PutPass>

export const Pass = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    feed_id: t.String(),
    holder: t.String({ description: 'the wallet that holds it (checksummed)' }),
    starts_at: UnixSeconds('when it starts: its sale, or the end of the pass it extends'),
    expires_at: UnixSeconds(),
    transaction_id: t.String({ description: 'tx_<uuid>: its sale in the ledger' }),
  },
  { description: 'A pass held: every paid entry of the feed, those published later too, from starts_at to expires_at' },
)
export type Pass = Static<typeof Pass>

export const PassFeedUrl = t.Object(
  {
    url: t.String({ description: "the feed as RSS 2.0, for podcast apps and feed readers: the holder's own, keep it private" }),
    atom_url: t.String({ description: 'the same feed as Atom 1.0' }),
    json_url: t.String({ description: 'the same feed as JSON Feed 1.1' }),
  },
  {
    description:
      "A pass holder's private feed: every entry with its full content (text inline, media as enclosures), read " +
      'with no signature while the pass runs; the same URLs until the holder revokes them',
  },
)
export type PassFeedUrl = Static<typeof PassFeedUrl>
