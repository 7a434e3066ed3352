// Access-link opens against a bare Bun.serve answering the same bytes, in the same run (wrk, alternating rounds):
//
//   npx bun scripts/bench/access-links.ts [--seconds N] [--rounds N] [--source <checkout>]...
//
// Each --source is a checkout of Trellis whose src/main.ts is started (default: this one), so a change can be
// measured against the code before it in one run. Every open is a full GET of an unlimited link: each counts a use,
// durably, before its bytes are sent.
import { join, resolve } from 'node:path'
import { startTestServer, type TestServer } from '../../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../../dev/api.ts'
import { startBaseline } from './processes.ts'
import { ensureWrk, wrk, type WrkResult } from './wrk.ts'

const ROOT = resolve(import.meta.dir, '..', '..')
const BODY = 'x'.repeat(1024) // a small entry: the cost measured is the open, not the bytes

function options() {
  const args = process.argv.slice(2)
  const opts = { seconds: 5, rounds: 2, sources: [] as string[] }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--seconds' && Number(args[i + 1]) > 0) opts.seconds = Number(args[++i])
    else if (args[i] === '--rounds' && Number(args[i + 1]) > 0) opts.rounds = Number(args[++i])
    else if (args[i] === '--source' && args[i + 1]) opts.sources.push(resolve(args[++i]!))
    else {
      console.error('Usage: npx bun scripts/bench/access-links.ts [--seconds N] [--rounds N] [--source <checkout>]...')
      process.exit(2)
    }
  }
  if (opts.sources.length === 0) opts.sources.push(ROOT)
  return opts
}

async function linkServer(source: string): Promise<{ server: TestServer; url: string }> {
  const server = await startTestServer(
    { TRELLIS_LOG: 'warn', TRELLIS_STATS_REFRESH_S: '3600' },
    { command: [process.execPath, join(source, 'src/main.ts')] },
  )
  const owner = newWallet()
  const feed = await createFeed(server.url, owner, { name: 'bench links' })
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(BODY), mime_type: 'text/plain' })
  const link = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`, { wallet: owner })
  if (link.status !== 201) throw new Error(`creating the link answered ${link.status}: ${link.text}`)
  return { server, url: link.body.url }
}

const summary = (r: WrkResult) => `${Math.round(r.rps)} req/s, p99 ${r.p99_ms?.toFixed(1)} ms, non-2xx ${r.non_2xx}`

const opts = options()
ensureWrk(console.log)
const baseline = await startBaseline()
const servers: { source: string; server: TestServer; url: string }[] = []
try {
  await fetch(`${baseline.url}/same`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: BODY })
  for (const source of opts.sources) servers.push({ source, ...(await linkServer(source)) })
  for (const s of servers) await wrk(s.url, 1) // warm up
  await wrk(`${baseline.url}/same`, 1)
  const results = new Map<string, { bare: WrkResult; link: WrkResult }[]>()
  for (let round = 1; round <= opts.rounds; round++) {
    for (const s of servers) {
      const bare = await wrk(`${baseline.url}/same`, opts.seconds)
      const link = await wrk(s.url, opts.seconds)
      ;(results.get(s.source) ?? results.set(s.source, []).get(s.source)!).push({ bare, link })
      console.log(`round ${round} ${s.source}: bare ${summary(bare)}; link ${summary(link)}; ratio ${(link.rps / bare.rps).toFixed(3)}`)
    }
  }
  for (const [source, rounds] of results) {
    const ratios = rounds.map((r) => r.link.rps / r.bare.rps)
    console.log(
      `${source}: access-link open / bare = ${ratios.map((r) => r.toFixed(3)).join(', ')}; link ` +
        `p99 ${rounds.map((r) => r.link.p99_ms?.toFixed(1)).join(', ')} ms`,
    )
  }
} finally {
  for (const s of servers) await s.server.dispose()
  await baseline.stop()
}
