// The read memo under a flood: a client that asks for thousands of distinct list URLs (each a new memo key), with
// writes landing between them, must not leave the normal list route slower afterwards. Measures GET /v1/feeds
// (page_size=20) under wrk before and after the flood, on a server started from a checkout's source.
//
//   npx bun scripts/bench/memo-flood.ts [--root <checkout>] [--flood 20000] [--seconds 3]
//
// --root: the checkout whose src/main.ts serves (default: this one), so two commits can be measured alike.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startTrellis } from './processes.ts'
import { authHeaders, signer, signerKey } from './signing.ts'
import { ensureWrk, wrk } from './wrk.ts'

const { values } = parseArgs({ options: { root: { type: 'string' }, flood: { type: 'string' }, seconds: { type: 'string' } } })
const root = resolve(values.root ?? join(import.meta.dir, '..', '..'))
const floodCount = Number(values.flood ?? 20_000)
const seconds = Number(values.seconds ?? 3)
if (!Number.isInteger(floodCount) || floodCount < 1 || !(seconds > 0))
  throw new Error('--flood must be a positive integer, --seconds positive')

ensureWrk(console.log)
const dataDir = mkdtempSync(join(tmpdir(), 'trellis-memo-flood-'))
const server = await startTrellis(process.execPath, dataDir, { TRELLIS_RATE_LIMIT: 'off' }, '/health', [
  '--no-env-file',
  join(root, 'src/main.ts'),
])
try {
  const url = server.url
  const owner = signer(signerKey(7))
  // A small market: 5 feeds with a few entries each, so listings have something to show.
  const feeds: string[] = []
  for (let i = 0; i < 5; i++) {
    const created = await fetch(`${url}/v1/feeds`, {
      method: 'POST',
      headers: await authHeaders(url, owner),
      body: JSON.stringify({ name: `flood ${i}`, tags: ['flood', `t${i}`] }),
    })
    const feed = (await created.json()) as { id: string }
    feeds.push(feed.id)
    for (let j = 0; j < 3; j++) {
      await fetch(`${url}/v1/feeds/${feed.id}/entries`, {
        method: 'POST',
        headers: await authHeaders(url, owner),
        body: JSON.stringify({ content_base64: Buffer.from(`entry ${i}.${j}`).toString('base64'), mime_type: 'text/plain' }),
      })
    }
  }
  const normal = `${url}/v1/feeds?page_size=20`
  const before = await wrk(normal, seconds)

  // The flood: distinct tag filters (each a new key), 64 at a time, a write after every 500.
  const started = performance.now()
  let next = 0
  let writes = 0
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < floodCount) {
        const i = next++
        await (await fetch(`${url}/v1/feeds?page_size=${1 + (i % 100)}&tags=flood-${i}`)).arrayBuffer()
        if (i % 500 === 499) {
          writes++
          await fetch(`${url}/v1/feeds/${feeds[i % feeds.length]}/entries`, {
            method: 'POST',
            headers: await authHeaders(url, owner),
            body: JSON.stringify({ content_base64: Buffer.from(`write ${i}`).toString('base64'), mime_type: 'text/plain' }),
          })
        }
      }
    }),
  )
  const floodMs = performance.now() - started
  const after = await wrk(normal, seconds)
  console.log(
    JSON.stringify({
      root,
      flood: floodCount,
      writes,
      flood_rps: Math.round(floodCount / (floodMs / 1000)),
      before_rps: Math.round(before.rps),
      after_rps: Math.round(after.rps),
      after_over_before: Number((after.rps / before.rps).toFixed(2)),
    }),
  )
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
