// Signed POST /v1/feeds/{id}/entries with 1 KiB of content, fired by 50 keep-alive fetch workers. Runs in its own
// process (spawned by measure-writes.ts) so the orchestrator's work never competes with the client loop.
//
//   bun scripts/bench/post-load.ts '<json: {url, keys, feedIds, count, concurrency}>'
// Prints `prepared` when the clock starts, then one JSON line: {count, prepare_ms, elapsed_ms, rps, statuses, p50_ms, p99_ms, first_error}.
import { authHeaders, signer } from './signing.ts'

const { url, keys, feedIds, count, concurrency } = JSON.parse(process.argv[2]!) as {
  url: string
  keys: `0x${string}`[]
  feedIds: string[]
  count: number
  concurrency: number
}
const accounts = keys.map(signer)

async function pool(n: number, work: (i: number) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await work(next++)
    }),
  )
}

// Prepare: every request needs its own nonce, signed before the clock starts.
const prepared: { url: string; headers: Record<string, string>; body: string }[] = new Array(count)
const prepareStart = performance.now()
await pool(count, async (i) => {
  const w = i % accounts.length
  const content = Buffer.alloc(1024, `entry ${i} `).toString('base64')
  prepared[i] = {
    url: `${url}/v1/feeds/${feedIds[w]}/entries`,
    headers: await authHeaders(url, accounts[w]!),
    body: JSON.stringify({ content_base64: content, mime_type: 'text/plain', title: `bench post ${i}`, tags: ['bench'] }),
  }
})
const prepareMs = performance.now() - prepareStart
console.log('prepared') // the orchestrator ends its CPU phase here: what follows is the timed part

const statuses: Record<string, number> = {}
const latencies: number[] = []
let firstError: string | null = null
const started = performance.now()
await pool(count, async (i) => {
  const t0 = performance.now()
  try {
    const response = await fetch(prepared[i]!.url, { method: 'POST', headers: prepared[i]!.headers, body: prepared[i]!.body })
    const text = await response.text()
    statuses[response.status] = (statuses[response.status] ?? 0) + 1
    if (response.status !== 201) firstError ??= `${response.status} ${text.slice(0, 200)}`
  } catch (error) {
    statuses.error = (statuses.error ?? 0) + 1
    firstError ??= String(error)
  }
  latencies.push(performance.now() - t0)
})
const elapsed = performance.now() - started
latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!
console.log(
  JSON.stringify({
    count,
    prepare_ms: Math.round(prepareMs),
    elapsed_ms: Math.round(elapsed),
    rps: ((statuses['201'] ?? 0) / elapsed) * 1000,
    statuses,
    p50_ms: pct(50),
    p99_ms: pct(99),
    first_error: firstError,
  }),
)
