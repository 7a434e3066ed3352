// Uploading the largest entry (37.5 MiB of content, what 50 MB of base64 carries) as multipart/form-data against the
// JSON form with content_base64, on one server: each form ROUNDS times, alternately, every upload of bytes of its own
// (nothing found already stored), the body built and the request signed before the clock starts. The figures: the
// median time from the request's start to its 201 read whole, and the server's RSS growth during it.
//
//   npx bun scripts/bench/measure-multipart.ts [--rounds N]
import { startTestServer } from '../../dev/server.ts'
import { authHeaders, createFeed, newWallet } from '../../dev/api.ts'
import { MAX_CONTENT_BYTES } from '../../src/models/entry.ts'
import { rssSampler } from './processes.ts'

const at = process.argv.indexOf('--rounds')
const ROUNDS = at > 0 ? Number(process.argv[at + 1]) : 5

const server = await startTestServer({ TRELLIS_RATE_LIMIT: 'off' })
try {
  const owner = newWallet()
  const feedId = (await createFeed(server.url, owner, { name: 'bench uploads' })).id
  const target = `${server.url}/v1/feeds/${feedId}/entries`
  const bytes = new Uint8Array(MAX_CONTENT_BYTES)
  for (let offset = 0; offset < bytes.length; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, offset + 65_536))
  let uploads = 0

  /** A body of new bytes (its first 8 count the uploads) in the form asked for, with its Content-Type. */
  async function body(form: 'json' | 'multipart'): Promise<{ body: Uint8Array<ArrayBuffer> | string; type: string }> {
    new DataView(bytes.buffer).setFloat64(0, ++uploads)
    if (form === 'json')
      return {
        body: JSON.stringify({ content_base64: Buffer.from(bytes).toString('base64'), mime_type: 'video/mp4' }),
        type: 'application/json',
      }
    const data = new FormData()
    data.append('content', new Blob([bytes], { type: 'video/mp4' }), 'clip.mp4')
    const response = new Response(data)
    const type = response.headers.get('content-type')! // (read before the body: Bun drops it once the body is read)
    return { body: new Uint8Array(await response.arrayBuffer()), type }
  }

  const runs: Record<'json' | 'multipart', { ms: number; rss_growth_mib: number; body_bytes: number }[]> = { json: [], multipart: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const form of round % 2 === 0 ? (['json', 'multipart'] as const) : (['multipart', 'json'] as const)) {
      const made = await body(form)
      const headers = { 'content-type': made.type, ...(await authHeaders(server.url, owner)) }
      Bun.gc(true)
      await Bun.sleep(200) // the server's collector settles after the last upload
      const sampler = rssSampler(server.pid)
      const started = performance.now()
      const response = await fetch(target, { method: 'POST', headers, body: made.body })
      const text = await response.text()
      const ms = performance.now() - started
      const rss = sampler.stop()
      if (response.status !== 201) throw new Error(`${form}: ${response.status} ${text.slice(0, 200)}`)
      const size = typeof made.body === 'string' ? Buffer.byteLength(made.body) : made.body.byteLength
      runs[form].push({ ms: Math.round(ms), rss_growth_mib: Math.round(rss.growth / 2 ** 20), body_bytes: size })
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const summary = Object.fromEntries(
    Object.entries(runs).map(([form, list]) => [
      form,
      {
        body_mib: Number((list[0]!.body_bytes / 2 ** 20).toFixed(1)),
        median_ms: median(list.map((r) => r.ms)),
        content_mb_per_s: Number((MAX_CONTENT_BYTES / 1e6 / (median(list.map((r) => r.ms)) / 1000)).toFixed(1)),
        median_rss_growth_mib: median(list.map((r) => r.rss_growth_mib)),
        runs_ms: list.map((r) => r.ms),
      },
    ]),
  )
  console.log(JSON.stringify({ content_bytes: MAX_CONTENT_BYTES, rounds: ROUNDS, ...summary }, null, 2))
} finally {
  await server.dispose()
}
