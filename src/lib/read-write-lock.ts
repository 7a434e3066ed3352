/**
 * Many shared holders at once, or one exclusive holder: an exclusive one waits for the shared ones under way, and
 * shared ones that come meanwhile wait for it, so it is never starved.
 */
export function readWriteLock() {
  let sharing = 0
  let exclusive: Promise<void> | null = null
  let drained: (() => void) | null = null
  return {
    async shared<T>(work: () => Promise<T>): Promise<T> {
      while (exclusive) await exclusive
      sharing++
      try {
        return await work()
      } finally {
        if (--sharing === 0) drained?.()
      }
    },
    async exclusive<T>(work: () => Promise<T>): Promise<T> {
      while (exclusive) await exclusive
      let release!: () => void
      exclusive = new Promise<void>((resolve) => (release = resolve))
      try {
        if (sharing > 0) await new Promise<void>((resolve) => (drained = resolve))
        drained = null
        return await work()
      } finally {
        exclusive = null
        release()
      }
    },
  }
}
