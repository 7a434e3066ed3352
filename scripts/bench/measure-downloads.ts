// 16 concurrent downloads of the 37 MiB free entry, read fully (streamed and counted here, so only the server's
// memory grows), while the server's RSS is sampled every 20 ms.
import { rssSampler } from './processes.ts'

export async function downloads(url: string, pid: number, entry: { feed_id: string; entry_id: string; size: number }, parallel = 16) {
  const target = `${url}/v1/feeds/${entry.feed_id}/entries/${entry.entry_id}/content`
  const sampler = rssSampler(pid)
  const started = performance.now()
  const results = await Promise.all(
    Array.from({ length: parallel }, async () => {
      try {
        const response = await fetch(target)
        let bytes = 0
        const reader = response.body!.getReader()
        for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength
        return { status: response.status, bytes }
      } catch (error) {
        return { status: `error: ${(error as Error).message}`, bytes: 0 }
      }
    }),
  )
  const ms = performance.now() - started
  const rss = sampler.stop()
  return {
    parallel,
    entry_bytes: entry.size,
    complete: results.filter((r) => r.status === 200 && r.bytes === entry.size).length,
    statuses: results.map((r) => r.status),
    ms,
    mb_per_s: (parallel * entry.size) / 1e6 / (ms / 1000),
    rss_before: rss.before,
    rss_peak: rss.peak,
    rss_growth: rss.growth,
  }
}
