/**
 * Group commit for an async flush: a call while a run is in flight waits for the next run, which all such callers
 * share. Every caller is answered by a run that started after it called, and at most one run is in flight.
 */
export function sharedRuns(run: () => Promise<void>): () => Promise<void> {
  let current: Promise<void> | null = null
  let next: Promise<void> | null = null
  const start = (): Promise<void> => (current = run().finally(() => (current = null)))
  return () => {
    if (!current) return start()
    next ??= current
      .catch(() => {})
      .then(() => {
        next = null
        return start()
      })
    return next
  }
}
