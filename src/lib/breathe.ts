// Long loops on the server's thread (a collection over every block) let requests through: every few milliseconds
// of work they give the event loop a turn.

/** Resolves at once, or after an event-loop turn once `everyMs` of work have passed since the last turn. */
export function breather(everyMs = 5) {
  let since = performance.now()
  return async () => {
    if (performance.now() - since < everyMs) return
    await new Promise((resolve) => setImmediate(resolve))
    since = performance.now()
  }
}
