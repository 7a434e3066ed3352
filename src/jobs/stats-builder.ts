// The server's side of the stats worker: each build answered by a promise.
import type { BuildRequest, BuildResult } from './stats-files.ts'
import { workerClient } from '../lib/workers.ts'

export interface StatsBuilder {
  build(what: { boards?: boolean; ranks?: boolean; checks?: boolean; integrity?: boolean; snapshotTo?: string; namedCids?: boolean }, now: number): Promise<BuildResult>
  stop(): Promise<void>
}

export function statsBuilder(d: { dbPath: string; dataDir: string }): StatsBuilder {
  const client = workerClient<Omit<BuildRequest, 'id'>, BuildResult>('jobs/stats-worker.ts')
  return {
    async build(what, now) {
      const result = await client.request({ dbPath: d.dbPath, dataDir: d.dataDir, now, boards: false, ranks: false, checks: false, ...what })
      if (result.error !== undefined) throw new Error(result.error)
      return result
    },
    // The worker closes its read connection first, so SQLite can clean up its WAL files.
    stop: () => client.stop(),
  }
}
