// The server's side of the stats worker: one request at a time per kind, answered by a promise. A worker that
// dies is replaced at the next request.
import type { BuildRequest, BuildResult } from './stats-files.ts'
import { workerEntry } from '../lib/workers.ts'

const WORKER = workerEntry('jobs/stats-worker.ts')

export interface StatsBuilder {
  build(what: { boards?: boolean; ranks?: boolean; checks?: boolean }, now: number): Promise<BuildResult>
  stop(): Promise<void>
}

export function statsBuilder(d: { dbPath: string; dataDir: string }): StatsBuilder {
  let worker: Worker | null = null
  let nextId = 1
  const waiting = new Map<number, { resolve: (r: BuildResult) => void; reject: (e: Error) => void }>()

  function start(): Worker {
    const w = new Worker(WORKER)
    w.onmessage = (event: MessageEvent<BuildResult>) => {
      const waiter = waiting.get(event.data.id)
      waiting.delete(event.data.id)
      if (!waiter) return
      if (event.data.error !== undefined) waiter.reject(new Error(event.data.error))
      else waiter.resolve(event.data)
    }
    w.onerror = (event) => {
      for (const waiter of waiting.values()) waiter.reject(new Error(`stats worker failed: ${event.message}`))
      waiting.clear()
      w.terminate()
      if (worker === w) worker = null
    }
    return w
  }

  return {
    build(what, now) {
      worker ??= start()
      const request: BuildRequest = { id: nextId++, dbPath: d.dbPath, dataDir: d.dataDir, now, boards: false, ranks: false, checks: false, ...what }
      return new Promise((resolve, reject) => {
        waiting.set(request.id, { resolve, reject })
        worker!.postMessage(request)
      })
    },
    /** Lets the worker close its connection (so SQLite can clean up its WAL files), then ends it. */
    async stop() {
      const w = worker
      worker = null
      waiting.clear() // shutting down: nobody is left to tell
      if (!w) return
      const closed = new Promise<void>((resolve) => {
        w.onmessage = (event) => event.data?.closed && resolve()
        setTimeout(resolve, 1_000) // a worker stuck in a long build is ended anyway
      })
      w.postMessage({ close: true })
      await closed
      w.terminate()
    },
  }
}
