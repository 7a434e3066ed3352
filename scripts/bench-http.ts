// Throughput of typical reads, as ratios against a bare Bun.serve answering a small JSON body in the same run.
// Needs wrk (Debian package `wrk`). Uses the built binary when it exists (npm run build), else src/main.ts.
//
//   bun scripts/bench-http.ts [seconds=5] [connections=50]
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer } from '../test/helpers/server.ts'
import { b64, createEntry, createFeed, newWallet } from '../test/helpers/api.ts'

const seconds = Number(process.argv[2] ?? 5)
const connections = Number(process.argv[3] ?? 50)
if (Bun.spawnSync(['which', 'wrk']).exitCode !== 0) {
  console.error('bench-http: wrk is not installed (apt-get install wrk)')
  process.exit(2)
}

function wrk(url: string): number {
  const out = Bun.spawnSync(['wrk', '-t2', `-c${connections}`, `-d${seconds}s`, url]).stdout.toString()
  const match = /Requests\/sec:\s+([\d.]+)/.exec(out)
  if (!match) throw new Error(`wrk failed for ${url}:\n${out}`)
  return Number(match[1])
}

// The baseline runs in its own process: this one blocks while wrk runs.
const baseline = Bun.spawn([process.execPath, '-e', `const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ status: 'ok', uptime_s: 1 }) }); console.log(s.port)`], { stdout: 'pipe' })
const baselinePort = Number(new TextDecoder().decode((await baseline.stdout.getReader().read()).value).trim())
const binary = join(import.meta.dir, '..', 'dist', 'trellis')
const server = await startTestServer({ TRELLIS_LOG: 'warn', TRELLIS_RATE_LIMIT: 'off' }, existsSync(binary) ? { command: [binary] } : {})
try {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'bench', tags: ['a', 'b'] })
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('x'.repeat(1024)) })
  for (let i = 0; i < 30; i++) await createEntry(server.url, owner, feed.id)
  const targets: [string, string][] = [
    ['GET /health', `${server.url}/health`],
    ['GET /v1/feeds/{id}', `${server.url}/v1/feeds/${feed.id}`],
    ['GET /v1/feeds (list of 20)', `${server.url}/v1/feeds`],
    ['GET /v1/feeds/{id}/entries (20)', `${server.url}/v1/feeds/${feed.id}/entries`],
    ['GET …/entries/{id}/content (1 KiB)', `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`],
    ['GET /v1/leaderboards/top-feeds', `${server.url}/v1/leaderboards/top-feeds`],
  ]
  const base = wrk(`http://127.0.0.1:${baselinePort}/`)
  console.log(`${existsSync(binary) ? 'dist/trellis' : 'bun src/main.ts'}; wrk -t2 -c${connections} -d${seconds}s on loopback, 2 cores shared by client and server`)
  console.log(`${'bare Bun.serve JSON (baseline)'.padEnd(38)} ${base.toFixed(0).padStart(8)} req/s  1.00`)
  for (const [name, url] of targets) {
    const rps = wrk(url)
    console.log(`${name.padEnd(38)} ${rps.toFixed(0).padStart(8)} req/s  ${(rps / base).toFixed(2)}`)
  }
} finally {
  baseline.kill()
  await server.dispose()
}
