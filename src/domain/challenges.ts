// The 402 challenges served, counted off the requests' path: a request that answers one adds 1 to a count in memory
// (by day, feed and entry, or the feed's pass) and goes on, awaiting nothing; a job of every instance adds what it
// counted to challenge_days every few seconds, one transaction for all of it (jobs/index.ts). The writes are unkept
// (no read of the table is kept in the read memo) and lazy: a power cut may lose the last seconds' counts, never a
// record. A flush that fails gives its counts back, for the next one.
import type { Records } from '../store/stores.ts'
import type { ChallengeCount } from '../store/analytics.ts'
import { nowSeconds } from '../lib/clock.ts'

const DAY = 86_400
const LAZILY = { durability: 'lazy', unkept: true } as const

export interface ChallengeCounter {
  /** One 402 answered for an entry (or, `entryId` null, for a feed's pass). Synchronous: a hot path calls it. */
  served(feedId: string, entryId: string | null): void
  /** Writes the counts held so far (after any flush under way): once it resolves, a read sees every count served before. */
  flush(): Promise<void>
}

export function challengeCounter(d: { records: Records }): ChallengeCounter {
  let held = new Map<string, number>()
  let flushing: Promise<void> = Promise.resolve()

  async function write(): Promise<void> {
    if (held.size === 0) return
    const batch = held
    held = new Map()
    const counts: ChallengeCount[] = [...batch].map(([key, challenges]) => {
      const [day, feed_id, entry_id] = key.split(' ')
      return { day: Number(day), feed_id: feed_id!, entry_id: entry_id!, challenges }
    })
    try {
      await d.records.transact((tx) => tx.analytics.addChallenges(counts), LAZILY)
    } catch (error) {
      for (const [key, n] of batch) held.set(key, (held.get(key) ?? 0) + n)
      throw error
    }
  }

  return {
    served(feedId, entryId) {
      const key = `${Math.floor(nowSeconds() / DAY)} ${feedId} ${entryId ?? ''}`
      held.set(key, (held.get(key) ?? 0) + 1)
    },
    flush() {
      flushing = flushing.catch(() => {}).then(write)
      return flushing
    },
  }
}
