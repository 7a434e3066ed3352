// The range and buckets of an analytics request: whole UTC days, cut into days, weeks (Monday to Sunday) or calendar
// months. Days are day numbers (Unix seconds / 86400); a range is [fromDay, toDay).
import { ANALYTICS_INTERVALS, DEFAULT_ANALYTICS_DAYS, MAX_SERIES_POINTS, type AnalyticsIntervalName } from '../models/analytics.ts'
import { fail } from './errors.ts'

export const DAY = 86_400
const TIME = /^[0-9]{1,11}$/

export interface AnalyticsRange {
  fromDay: number
  toDay: number
  interval: AnalyticsIntervalName
  /** The first day of each bucket, in order (the first may come before fromDay). */
  starts: number[]
}

/** The Monday on or before `day` (day 4, 1970-01-05, was a Monday). */
export const weekStart = (day: number): number => day - ((((day + 3) % 7) + 7) % 7)

/** The first day of the month `day` is in, and of the month after it. */
function monthOf(day: number): { start: number; next: number } {
  const date = new Date(day * DAY * 1000)
  const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()]
  return { start: Date.UTC(year, month, 1) / 1000 / DAY, next: Date.UTC(year, month + 1, 1) / 1000 / DAY }
}

/** The start of the bucket `day` falls in. */
export function bucketStart(interval: AnalyticsIntervalName, day: number): number {
  return interval === 'day' ? day : interval === 'week' ? weekStart(day) : monthOf(day).start
}

/** How many buckets [fromDay, toDay) spans (toDay > fromDay), without listing them. */
function pointCount(interval: AnalyticsIntervalName, fromDay: number, toDay: number): number {
  if (interval === 'day') return toDay - fromDay
  if (interval === 'week') return (weekStart(toDay - 1) - weekStart(fromDay)) / 7 + 1
  const month = (day: number) => {
    const date = new Date(day * DAY * 1000)
    return date.getUTCFullYear() * 12 + date.getUTCMonth()
  }
  return month(toDay - 1) - month(fromDay) + 1
}

function seconds(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined
  if (!TIME.test(raw)) fail('INVALID_PARAMETER', `invalid ${name}`, `${name} must be Unix seconds (an integer of at most 11 digits)`)
  return Number(raw)
}

/**
 * The range asked for: `from` back to the start of its day, `to` (exclusive) on to the start of the next day unless it is
 * one; without `to`, the end of today (UTC); without `from`, DEFAULT_ANALYTICS_DAYS days before the end. 400 when
 * the range is empty or has more than MAX_SERIES_POINTS buckets.
 */
export function analyticsRange(query: { from?: string; to?: string; interval?: string }, now: number): AnalyticsRange {
  const interval = (query.interval || 'day') as AnalyticsIntervalName
  if (!ANALYTICS_INTERVALS.includes(interval))
    fail('INVALID_PARAMETER', 'invalid interval', `interval must be one of ${ANALYTICS_INTERVALS.join(', ')}`)
  const from = seconds(query.from, 'from')
  const to = seconds(query.to, 'to')
  const toDay = to === undefined ? Math.floor(now / DAY) + 1 : Math.ceil(to / DAY)
  const fromDay = from === undefined ? toDay - DEFAULT_ANALYTICS_DAYS : Math.floor(from / DAY)
  if (fromDay < 0 || fromDay >= toDay) fail('INVALID_PARAMETER', 'invalid range', 'from must be before to (the range holds at least a day)')
  const points = pointCount(interval, fromDay, toDay)
  if (points > MAX_SERIES_POINTS)
    fail(
      'INVALID_PARAMETER',
      'range too long',
      `at most ${MAX_SERIES_POINTS} ${interval}s a series (this range has ${points}): shorten it, or take a longer interval`,
    )
  const starts: number[] = []
  for (let start = bucketStart(interval, fromDay); start < toDay; ) {
    starts.push(start)
    start = interval === 'day' ? start + 1 : interval === 'week' ? start + 7 : monthOf(start).next
  }
  return { fromDay, toDay, interval, starts }
}

/** For each day of the range (from fromDay), the index of its bucket in `starts`. */
export function bucketIndexes(range: AnalyticsRange): Int32Array {
  const indexes = new Int32Array(range.toDay - range.fromDay)
  let bucket = 0
  for (let day = range.fromDay; day < range.toDay; day++) {
    while (bucket + 1 < range.starts.length && range.starts[bucket + 1]! <= day) bucket++
    indexes[day - range.fromDay] = bucket
  }
  return indexes
}
