// Prepared writes (signed with a wallet, or with given headers such as admin-api-key) fired by keep-alive fetch
// workers. Runs in its own process (spawned by measure-signed-writes.ts) so the orchestrator never competes with
// the client loop. Every signed request gets its own nonce, signed before the clock starts.
//
//   echo '<json: {url, requests: [{key?, method, path, body?, headers?}], concurrency}>' | bun scripts/bench/signed-load.ts
// Prints one JSON line: {count, elapsed_ms, rps (2xx answers per second), statuses, first_error, ids}.
import { authHeaders, signer } from './signing.ts'

export interface LoadRequest {
  key?: `0x${string}`
  method: string
  path: string
  body?: unknown
  headers?: Record<string, string>
}
export interface LoadResult {
  count: number
  elapsed_ms: number
  rps: number
  statuses: Record<string, number>
  first_error: string | null
  ids: (string | null)[]
}

if (import.meta.main) {
  const { url, requests, concurrency } = JSON.parse(await Bun.stdin.text()) as { url: string; requests: LoadRequest[]; concurrency: number }
  const pool = async (work: (i: number) => Promise<void>) => {
    let next = 0
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests.length) await work(next++)
      }),
    )
  }
  const prepared: { headers: Record<string, string>; body?: string }[] = new Array(requests.length)
  await pool(async (i) => {
    const r = requests[i]!
    const signed = r.key ? await authHeaders(url, signer(r.key)) : { 'content-type': 'application/json' }
    prepared[i] = { headers: { ...signed, ...r.headers }, ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }) }
  })
  const statuses: Record<string, number> = {}
  const ids: (string | null)[] = new Array(requests.length).fill(null)
  let firstError: string | null = null
  const started = performance.now()
  await pool(async (i) => {
    try {
      const response = await fetch(`${url}${requests[i]!.path}`, { method: requests[i]!.method, ...prepared[i] })
      const text = await response.text()
      statuses[response.status] = (statuses[response.status] ?? 0) + 1
      if (response.ok) ids[i] = text ? ((JSON.parse(text) as { id?: string }).id ?? null) : null
      else firstError ??= `${requests[i]!.method} ${requests[i]!.path}: ${response.status} ${text.slice(0, 200)}`
    } catch (error) {
      statuses.error = (statuses.error ?? 0) + 1
      firstError ??= String(error)
    }
  })
  const elapsed = performance.now() - started
  const ok = Object.entries(statuses)
    .filter(([s]) => s.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0)
  console.log(
    JSON.stringify({
      count: requests.length,
      elapsed_ms: Math.round(elapsed),
      rps: (ok / elapsed) * 1000,
      statuses,
      first_error: firstError,
      ids,
    } satisfies LoadResult),
  )
}
