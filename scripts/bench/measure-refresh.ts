// Read latency while the statistics are rebuilt: a server of its own with TRELLIS_STATS_REFRESH_S=2 (the main
// server runs with a long period so no rebuild lands inside the throughput runs), wrk on one read route for at
// least WINDOW_S. /health is polled meanwhile to count the rebuilds that finished inside the window: a full-market
// rebuild takes 5-6 s while wrk holds both cores, so a shorter window may see none finish.
import { jobRuns, jobsSettled, startTrellis } from './processes.ts'
import { wrk } from './wrk.ts'

const REFRESH_S = 2
const WINDOW_S = 15

/** `env`: what else the server needs (the database URL of a run on PostgreSQL). */
export async function duringRefresh(
  binary: string,
  dataDir: string,
  path: string,
  seconds: number,
  probePath: string,
  env: Record<string, string> = {},
) {
  const duration = Math.max(seconds, WINDOW_S)
  const server = await startTrellis(binary, dataDir, { ...env, TRELLIS_STATS_REFRESH_S: String(REFRESH_S) }, probePath)
  try {
    await jobsSettled(server.url)
    const seen = new Set<number>()
    let polling = true
    const poller = (async () => {
      while (polling) {
        const last = (await jobRuns(server.url))?.stats
        if (last) seen.add(last)
        await Bun.sleep(250)
      }
    })()
    const result = await wrk(`${server.url}${path}`, duration)
    polling = false
    await poller
    return {
      refresh_period_s: REFRESH_S,
      duration_s: duration,
      route: path,
      stats_runs_seen: [...seen].sort(),
      rebuilds_finished_in_window: Math.max(0, seen.size - 1),
      ...result,
    }
  } finally {
    await server.stop()
  }
}
