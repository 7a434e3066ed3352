// Workers of this server: where their entrypoints are, and one request/answer client for them.

/**
 * Where a worker's entrypoint is. From source: its file under src/. In the compiled binary all modules share one
 * bundle under /$bunfs/root/, and each worker is an entrypoint of its own there, by its path from src/
 * (scripts/build.ts lists them).
 */
export function workerEntry(pathFromSrc: string): string {
  return import.meta.url.includes('/$bunfs/') ? `./${pathFromSrc}` : new URL(`../${pathFromSrc}`, import.meta.url).href
}

/**
 * Requests answered by a worker, matched by id. A worker that dies fails what it was asked and is replaced at the
 * next request. `stop` sends `{close: true}` and waits (at most 1 s) for `{closed: true}`, so the worker can
 * release what it holds, then ends it.
 */
export function workerClient<Request extends object, Answer extends { id: number }>(pathFromSrc: string) {
  const entry = workerEntry(pathFromSrc)
  let worker: Worker | null = null
  let nextId = 1
  const waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>()

  function start(): Worker {
    const w = new Worker(entry)
    w.onmessage = (event: MessageEvent<Answer>) => {
      const waiter = waiting.get(event.data.id)
      waiting.delete(event.data.id)
      waiter?.resolve(event.data)
    }
    w.onerror = (event) => {
      for (const waiter of waiting.values()) waiter.reject(new Error(`worker ${pathFromSrc} failed: ${event.message}`))
      waiting.clear()
      w.terminate()
      if (worker === w) worker = null
    }
    ;(w as unknown as { unref?: () => void }).unref?.() // the server keeps the process alive, never a worker on its own
    return w
  }

  return {
    request(message: Request): Promise<Answer> {
      worker ??= start()
      const id = nextId++
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        worker!.postMessage({ ...message, id })
      })
    },
    async stop(): Promise<void> {
      const w = worker
      worker = null
      waiting.clear() // shutting down: nobody is left to tell
      if (!w) return
      const closed = new Promise<void>((resolve) => {
        w.onmessage = (event) => event.data?.closed && resolve()
        setTimeout(resolve, 1_000) // a worker stuck in a long job is ended anyway
      })
      w.postMessage({ close: true })
      await closed
      w.terminate()
    },
  }
}
