// Instances on one database keep reads only while they hear each other's commits (the change feed's LISTEN). A feed
// that goes deaf (its connection lost and not made again, a pooler that swallows notices) turns every instance's
// read memo off: correct, but each read then goes to the database, and nothing else would say so. This watch says it:
// one warn line when the feed stops being heard, one line when it is heard again, and a gauge on /metrics.
import type { Changes } from '../store/records.ts'

const EVERY_MS = 500

export interface ChangeFeedWatch {
  metrics(): string[]
  stop(): void
}

export function watchChangeFeed(
  changes: Pick<Changes, 'live'>,
  log: { warn(msg: string, fields?: Record<string, unknown>): void; info(msg: string, fields?: Record<string, unknown>): void },
): ChangeFeedWatch {
  let heard = changes.live()
  let deafSince: number | null = heard ? null : Date.now()
  const timer = setInterval(() => {
    const now = changes.live()
    if (now === heard) return
    heard = now
    if (!now) {
      deafSince = Date.now()
      log.warn(
        "the change feed is not heard: this instance keeps no reads (each goes to the database) until it hears the others' writes again",
      )
    } else {
      log.info('the change feed is heard again: reads are kept again', { deaf_s: Math.round((Date.now() - deafSince!) / 100) / 10 })
      deafSince = null
    }
  }, EVERY_MS)
  timer.unref()
  return {
    metrics: () => [
      "# HELP trellis_change_feed_heard Whether this instance hears the other instances' commits (1); 0: its read memo is off.",
      '# TYPE trellis_change_feed_heard gauge',
      `trellis_change_feed_heard ${heard ? 1 : 0}`,
    ],
    stop: () => clearInterval(timer),
  }
}
