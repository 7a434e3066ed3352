// The writes besides entry creation and upload: feed create, update and delete, wallet profile update, entry
// delete, and the admin category routes, each `count` requests by 50 workers (signed-load.ts, its own process).
// Each answer must be its success status; the figure is successful requests per second.
import { join } from 'node:path'
import { signer, signerKey } from './signing.ts'
import type { LoadRequest, LoadResult } from './signed-load.ts'

export const ADMIN_KEY = 'trellis-bench-admin-key'
const FEEDS_PER_SIGNER = 5 // below the 10 active feeds a wallet may own
const FIRST_SIGNER = 100 // signers 0..9 write entries (measure-writes.ts)

export interface WriteResult extends Omit<LoadResult, 'ids'> {
  name: string
  expect: number
}

async function load(url: string, requests: LoadRequest[]): Promise<LoadResult> {
  // On stdin: a thousand requests are more than one argument may hold (128 KiB on Linux).
  const input = new Blob([JSON.stringify({ url, requests, concurrency: 50 })])
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'signed-load.ts')], { stdin: input, stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if ((await proc.exited) !== 0) throw new Error(`signed-load exited ${proc.exitCode}: ${err.slice(-1000)}`)
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult
}

export async function signedWrites(url: string, count: number, log: (line: string) => void): Promise<WriteResult[]> {
  const results: WriteResult[] = []
  const run = async (name: string, expect: number, requests: LoadRequest[]) => {
    const { ids, ...result } = await load(url, requests)
    log(
      `bench: ${name.padEnd(44)} ${result.rps.toFixed(0).padStart(6)} ` +
        `req/s ${JSON.stringify(result.statuses)}${result.first_error ? ` first error: ${result.first_error}` : ''}`,
    )
    results.push({ name, expect, ...result })
    return ids
  }
  const keyOf = (i: number) => signerKey(FIRST_SIGNER + Math.floor(i / FEEDS_PER_SIGNER))
  const each = (make: (i: number) => LoadRequest) => Array.from({ length: count }, (_, i) => make(i))

  const feedIds = await run(
    'POST /v1/feeds',
    201,
    each((i) => ({ key: keyOf(i), method: 'POST', path: '/v1/feeds', body: { name: `bench feed ${i}`, tags: ['bench'] } })),
  )
  await run(
    'PATCH /v1/feeds/{id}',
    200,
    each((i) => ({ key: keyOf(i), method: 'PATCH', path: `/v1/feeds/${feedIds[i]}`, body: { description: `updated ${i}` } })),
  )
  const month = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000 }
  await run(
    'PUT /v1/feeds/{id}/pass',
    200,
    each((i) => ({ key: keyOf(i), method: 'PUT', path: `/v1/feeds/${feedIds[i]}/pass`, body: month })),
  )
  // The owner may ask for the private feed URL a holder asks for (the same route, without a chain to buy a pass).
  await run(
    'POST /v1/feeds/{id}/pass/feed-url',
    200,
    each((i) => ({ key: keyOf(i), method: 'POST', path: `/v1/feeds/${feedIds[i]}/pass/feed-url` })),
  )
  await run(
    'DELETE /v1/feeds/{id}/pass/feed-url',
    204,
    each((i) => ({ key: keyOf(i), method: 'DELETE', path: `/v1/feeds/${feedIds[i]}/pass/feed-url` })),
  )
  await run(
    'GET /v1/passes?holder= (signed)',
    200,
    each((i) => ({ key: keyOf(i), method: 'GET', path: `/v1/passes?holder=${signer(keyOf(i)).address}` })),
  )
  const owners = await Promise.all(
    Array.from(
      { length: count / FEEDS_PER_SIGNER },
      async (_, k) => ((await (await fetch(`${url}/v1/feeds/${feedIds[k * FEEDS_PER_SIGNER]}`)).json()) as { owner_id: string }).owner_id,
    ),
  )
  await run(
    'PATCH /v1/wallets/{id}',
    200,
    each((i) => ({
      key: keyOf(i),
      method: 'PATCH',
      path: `/v1/wallets/${owners[Math.floor(i / FEEDS_PER_SIGNER)]}`,
      body: { username: `benchuser${i}` },
    })),
  )
  const content = Buffer.from('to be deleted').toString('base64')
  const entryIds = await run(
    'POST /v1/feeds/{id}/entries (for the deletes)',
    201,
    each((i) => ({
      key: keyOf(i),
      method: 'POST',
      path: `/v1/feeds/${feedIds[i]}/entries`,
      body: { content_base64: content, mime_type: 'text/plain', title: `doomed ${i}` },
    })),
  )
  await run(
    'PATCH /v1/feeds/{id}/entries/{entry_id}',
    200,
    each((i) => ({
      key: keyOf(i),
      method: 'PATCH',
      path: `/v1/feeds/${feedIds[i]}/entries/${entryIds[i]}`,
      body: { title: `edited ${i}`, tags: ['edited'] },
    })),
  )
  // Five endpoints per signer (the most a wallet may have), at a public address literal (no lookup): nothing is sold
  // meanwhile, so nothing is sent to them; they are removed after.
  const hookIds = await run(
    'POST /v1/webhooks',
    201,
    each((i) => ({ key: keyOf(i), method: 'POST', path: '/v1/webhooks', body: { url: `https://1.1.1.1/bench/${i}` } })),
  )
  await run(
    'GET /v1/webhooks (signed)',
    200,
    each((i) => ({ key: keyOf(i), method: 'GET', path: '/v1/webhooks' })),
  )
  await run(
    'GET /v1/webhooks/{id}/deliveries (signed)',
    200,
    each((i) => ({ key: keyOf(i), method: 'GET', path: `/v1/webhooks/${hookIds[i]}/deliveries` })),
  )
  await run(
    'DELETE /v1/webhooks/{id}',
    204,
    each((i) => ({ key: keyOf(i), method: 'DELETE', path: `/v1/webhooks/${hookIds[i]}` })),
  )
  const admin = { 'admin-api-key': ADMIN_KEY }
  await run(
    'POST /v1/admin/feeds/{id}/takedown (admin)',
    201,
    each((i) => ({ method: 'POST', path: `/v1/admin/feeds/${feedIds[i]}/takedown`, headers: admin, body: { reason: `bench ${i}` } })),
  )
  await run(
    'POST /v1/admin/feeds/{id}/reinstate (admin)',
    200,
    each((i) => ({ method: 'POST', path: `/v1/admin/feeds/${feedIds[i]}/reinstate`, headers: admin })),
  )
  await run(
    'POST /v1/admin/entries/{id}/takedown (admin)',
    201,
    each((i) => ({ method: 'POST', path: `/v1/admin/entries/${entryIds[i]}/takedown`, headers: admin, body: { reason: `bench ${i}` } })),
  )
  await run(
    'POST /v1/admin/entries/{id}/reinstate (admin)',
    200,
    each((i) => ({ method: 'POST', path: `/v1/admin/entries/${entryIds[i]}/reinstate`, headers: admin })),
  )
  await run(
    'POST /v1/auth/session',
    200,
    each((i) => ({ key: keyOf(i), method: 'POST', path: '/v1/auth/session' })),
  )
  await run(
    'DELETE /v1/feeds/{id}/entries/{entry_id}',
    204,
    each((i) => ({ key: keyOf(i), method: 'DELETE', path: `/v1/feeds/${feedIds[i]}/entries/${entryIds[i]}` })),
  )
  await run(
    'DELETE /v1/feeds/{id}/pass',
    204,
    each((i) => ({ key: keyOf(i), method: 'DELETE', path: `/v1/feeds/${feedIds[i]}/pass` })),
  )
  await run(
    'DELETE /v1/feeds/{id}',
    204,
    each((i) => ({ key: keyOf(i), method: 'DELETE', path: `/v1/feeds/${feedIds[i]}` })),
  )
  const categoryIds = await run(
    'POST /v1/categories (admin)',
    201,
    each((i) => ({ method: 'POST', path: '/v1/categories', headers: admin, body: { name: `Bench ${i}` } })),
  )
  await run(
    'PATCH /v1/categories/{id} (admin)',
    200,
    each((i) => ({ method: 'PATCH', path: `/v1/categories/${categoryIds[i]}`, headers: admin, body: { description: `updated ${i}` } })),
  )
  return results
}
