// A creator's analytics (issue 39): its sales, buyers and 402 challenges over a range of whole UTC days, in buckets.
import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, OneOf, UnixSeconds } from './common.ts'

/** How a range is cut into series points: UTC days, weeks from Monday 00:00 UTC, calendar months (UTC). */
export const ANALYTICS_INTERVALS = ['day', 'week', 'month'] as const
export type AnalyticsIntervalName = (typeof ANALYTICS_INTERVALS)[number]
/** The most points a series may have: a year of days (a longer range takes a longer interval). */
export const MAX_SERIES_POINTS = 366
/** The range when neither end is given: the last 30 days, today included. */
export const DEFAULT_ANALYTICS_DAYS = 30
/** How many entries and feeds the top lists hold. */
export const ANALYTICS_TOP = 10
/** The columns of the CSV export, one row per sale, in this order. */
export const ANALYTICS_CSV_COLUMNS = [
  'time',
  'feed_id',
  'entry_id',
  'kind',
  'payer',
  'amount',
  'amount_usdc',
  'network',
  'transaction_hash',
] as const

const Count = t.Integer({ minimum: 0 })
const TIME_PATTERN = '^[0-9]{1,11}$'
const RANGE_RULE =
  'Unix seconds; the range is whole UTC days: from is moved back to the start of its day, to (exclusive) on to ' +
  'the start of the next day unless it is one'

export const AnalyticsInterval = OneOf(ANALYTICS_INTERVALS, {
  description: `day (the default), week (from Monday 00:00 UTC) or month (UTC); at most ${MAX_SERIES_POINTS} points`,
})

/** The query of GET /v1/wallets/{wallet_id}/analytics, field by field (a route spreads it into its query object). */
export const analyticsQuery = {
  from: t.Optional(t.String({ pattern: TIME_PATTERN, description: `${RANGE_RULE}. Default: ${DEFAULT_ANALYTICS_DAYS} days before to` })),
  to: t.Optional(t.String({ pattern: TIME_PATTERN, description: `${RANGE_RULE}. Default: the end of today (UTC)` })),
  interval: t.Optional(AnalyticsInterval),
  format: t.Optional(OneOf(['json', 'csv'] as const, { description: 'csv: one row per sale (as Accept: text/csv); default json' })),
}

const sales = {
  sales: Count,
  revenue: Money('revenue in USDC smallest units, as a decimal string'),
}

export const AnalyticsPoint = t.Object(
  {
    start: UnixSeconds(
      'the calendar start of the bucket (a day, a Monday, the 1st of a month, 00:00 UTC); the first bucket may start before from',
    ),
    revenue: sales.revenue,
    sales: sales.sales,
    unique_buyers: t.Integer({ minimum: 0, description: 'distinct payers within this bucket (and the range)' }),
    challenges: Count,
  },
  { description: 'One bucket of an analytics series' },
)
export type AnalyticsPoint = Static<typeof AnalyticsPoint>

export const AnalyticsEntry = t.Object(
  { entry_id: t.String(), title: Nullable(t.String()), ...sales, challenges: Count },
  { description: 'An entry of the wallet, by its sales in the range' },
)
export type AnalyticsEntry = Static<typeof AnalyticsEntry>

export const AnalyticsFeed = t.Object(
  { feed_id: t.String(), name: t.String(), ...sales, challenges: t.Integer({ minimum: 0, description: "its entries' and its pass's" }) },
  { description: 'A feed of the wallet, by its sales in the range (entries and passes)' },
)
export type AnalyticsFeed = Static<typeof AnalyticsFeed>

export const Analytics = t.Object(
  {
    wallet_id: t.String(),
    from: UnixSeconds('the start of the range (00:00 UTC of its first day)'),
    to: UnixSeconds('the end of the range, exclusive (00:00 UTC of the day after its last)'),
    interval: AnalyticsInterval,
    totals: t.Object({
      revenue: sales.revenue,
      revenue_usdc: t.String({ description: 'in USDC, decimal' }),
      sales: sales.sales,
      entry_sales: Count,
      pass_sales: Count,
      unique_buyers: t.Integer({ minimum: 0, description: 'distinct payers in the range' }),
      repeat_buyers: t.Integer({ minimum: 0, description: 'payers with two or more purchases in the range' }),
      challenges: t.Integer({ minimum: 0, description: "402 answers served for the wallet's entries and passes" }),
    }),
    series: t.Array(AnalyticsPoint, { description: 'every bucket of the range, oldest first, empty ones included' }),
    top_entries: t.Array(AnalyticsEntry, {
      description: `at most ${ANALYTICS_TOP}: by revenue, then sales, then challenges (entries with neither left out)`,
    }),
    top_feeds: t.Array(AnalyticsFeed, { description: `at most ${ANALYTICS_TOP}, ordered as top_entries` }),
  },
  {
    description: "A wallet's sales (ledger rows paid to it: its feeds' entries and passes), buyers and 402 challenges over a range",
  },
)
export type Analytics = Static<typeof Analytics>
