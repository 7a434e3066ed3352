// Reading a child process's output line by line, until it says it is ready.

/** Calls onLine for each complete line of the stream, until the stream ends (it always drains: no full pipes). */
export async function forEachLine(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder()
  let buffered = ''
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }))
    if (done) break
    buffered += decoder.decode(value, { stream: true })
    let newline: number
    while ((newline = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
    }
  }
  if (buffered) onLine(buffered)
}

/**
 * Resolves with the first value `match` finds in a line of `stream`; rejects when the stream ends first or after
 * `timeoutMs`. Lines keep flowing to `onLine` afterwards.
 */
export function waitForLine<T>(
  stream: ReadableStream<Uint8Array>,
  match: (line: string) => T | undefined,
  options: { timeoutMs: number; onLine?: (line: string) => void; what: string },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let found = false
    const timer = setTimeout(() => reject(new Error(`${options.what} did not start in ${options.timeoutMs / 1000} s`)), options.timeoutMs)
    forEachLine(stream, (line) => {
      options.onLine?.(line)
      if (found) return
      const value = match(line)
      if (value !== undefined) {
        found = true
        clearTimeout(timer)
        resolve(value)
      }
    }).then(() => {
      clearTimeout(timer)
      if (!found) reject(new Error(`${options.what} exited before it was ready`))
    })
  })
}

/** The URL in a Trellis "listening" log line. */
export function listeningUrl(line: string): string | undefined {
  try {
    const parsed = JSON.parse(line)
    return parsed.msg === 'listening' ? parsed.url : undefined
  } catch {
    return undefined // not a JSON log line
  }
}
