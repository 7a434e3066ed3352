// Holds a large streamed request's memory growth near a budget. Reading a 50 MB base64 body makes about three times
// its size in short-lived garbage (the body's chunks, their text, the decoded pieces once imported) while what is
// live stays a few MiB; left to its own pace the collector let RSS grow to several times the payload. When RSS passes
// the budget, a full collection (a short pause) brings it back.

/** After a collection, the next one waits until RSS grows this much more, so a heap that cannot shrink costs few. */
const STEP_BYTES = 16 * 1024 * 1024
/** Reading RSS is a system call, not free under load: it is read once per this much progress, not once per chunk. */
const CHECK_EVERY_BYTES = 1024 * 1024

/**
 * RSS as a guarded request arrives, for memoryGuard's `from`: read only when the body may be large enough to be
 * checked at all (`declaredBytes` NaN when the length is not declared); else 0.
 */
export const rssBeforeBody = (declaredBytes: number): number => (declaredBytes < CHECK_EVERY_BYTES ? 0 : process.memoryUsage.rss())

/** Returns a check to call with the request's progress (bytes read so far). `from`: RSS when the request began. */
export function memoryGuard(budgetBytes: number, from = process.memoryUsage.rss()): (progress: number) => void {
  let limit = from + budgetBytes
  let nextCheck = CHECK_EVERY_BYTES
  return (progress) => {
    if (progress < nextCheck) return
    nextCheck = progress + CHECK_EVERY_BYTES
    if (process.memoryUsage.rss() <= limit) return
    Bun.gc(true)
    limit = Math.max(limit, process.memoryUsage.rss() + STEP_BYTES)
  }
}
