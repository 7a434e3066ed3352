// The whole benchmark, from a fresh clone, in one command:
//
//   npx bun scripts/bench/run.ts [--small] [--seconds N] [--out file.json] [--only name,name]
//
// --only: just the measures whose name contains one of the given texts (case-insensitive), e.g.
// --only recent-entries,image; the other measures (writes, upload, downloads, refresh) run only when named too.
//
// Installs wrk if missing, builds dist/trellis, seeds (or reuses) a market-sized data directory, then measures
// the server against a bare Bun.serve in the same run and prints/writes every figure against its target.
// See docs/performance.md.
import { cpus, release, tmpdir, totalmem } from 'node:os'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ensureWrk } from './wrk.ts'
import { freshCopy, seededDir } from './dataset.ts'
import { jobsSettled, memory, startBaseline, startTrellis } from './processes.ts'
import { measureReads, PAIRS, readTargets, warmUp } from './measure-reads.ts'
import { discover } from './routes.ts'
import { signedPosts, upload } from './measure-writes.ts'
import { ADMIN_KEY, signedWrites } from './measure-signed-writes.ts'
import { downloads } from './measure-downloads.ts'
import { duringRefresh } from './measure-refresh.ts'
import { otherRows, printTable, readRow, writeRow } from './report.ts'

const ROOT = resolve(import.meta.dir, '..', '..')
const BINARY = join(ROOT, 'dist', 'trellis')
const PROBE = '/v1/leaderboards/top-revenue'
// No scheduled rebuild inside the throughput runs; the cost of rebuilds is measured on its own (measure-refresh.ts).
// The admin key opens the category administration routes, measured with the other writes.
const MAIN_ENV = { TRELLIS_STATS_REFRESH_S: '3600', TRELLIS_ADMIN_KEY: ADMIN_KEY }

function options() {
  const args = process.argv.slice(2)
  const usage = 'Usage: npx bun scripts/bench/run.ts [--small] [--seconds N] [--out file.json] [--only name,name]'
  const opts = { small: false, seconds: 3, out: 'bench-results.json', only: [] as string[] }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--small') opts.small = true
    else if (args[i] === '--seconds' && /^\d+$/.test(args[i + 1] ?? '') && Number(args[i + 1]) > 0) opts.seconds = Number(args[++i])
    else if (args[i] === '--out' && args[i + 1]) opts.out = args[++i]!
    else if (args[i] === '--only' && args[i + 1]) opts.only = args[++i]!.split(',').map((n) => n.trim().toLowerCase()).filter(Boolean)
    else {
      console.error(usage)
      process.exit(2)
    }
  }
  return opts
}

const sh = (cmd: string[]) => Bun.spawnSync(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' }).stdout.toString().trimEnd()

function build(log: (line: string) => void) {
  log('bench: npm run build')
  const result = Bun.spawnSync(['npm', 'run', 'build', '--silent'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const output = `${result.stdout}${result.stderr}`.split('\n').filter((l) => l && !l.startsWith('npm warn')).join('\n')
  if (result.exitCode !== 0) throw new Error(`npm run build failed (exit ${result.exitCode}):\n${output}`)
  log(output)
}

const opts = options()
/** Whether a measure runs: every one, or with --only those whose name contains one of its texts. */
const selected = (name: string) => opts.only.length === 0 || opts.only.some((text) => name.toLowerCase().includes(text))
const log = (line: string) => console.log(line)
const cleanups: (() => unknown)[] = []
const cleanup = async () => {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve().then(fn).catch((e) => console.error(`bench: cleanup: ${e}`))
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanup().then(() => process.exit(130)))

try {
  const started = new Date()
  ensureWrk(log)
  // The source state the binary is built from (src/ may change while the benchmark runs).
  const git = { commit: sh(['git', 'rev-parse', 'HEAD']), uncommitted: sh(['git', 'status', '--porcelain', '--', 'src']).split('\n').filter(Boolean) }
  build(log)
  const seeded = await seededDir(opts.small, log)
  const m = seeded.manifest
  const dataDir = freshCopy(seeded.dir)
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-bench-scratch-'))
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }))

  const baseline = await startBaseline()
  cleanups.push(() => baseline.stop())
  log(`bench: starting dist/trellis on ${dataDir}`)
  const server = await startTrellis(BINARY, dataDir, MAIN_ENV, PROBE)
  cleanups.push(() => server.stop())
  log(`bench: first 200 on ${PROBE} ${server.startMs.toFixed(0)} ms after spawn`)

  const jobsMs = await jobsSettled(server.url)
  log(`bench: start-up jobs (statistics, ranks, ledger check) finished ${(jobsMs / 1000).toFixed(1)} s after the first 200`)
  const targets = readTargets(m, await discover(server.url, m)).filter((t) => selected(t.name))
  await warmUp(server.url, targets, 5)
  const rssAfterWarmUp = memory(server.pid).rss
  log(`bench: RSS after warm-up ${(rssAfterWarmUp / 1048576).toFixed(0)} MiB; wrk -t2 -c50 -d${opts.seconds}s per run, ${PAIRS} rounds (baseline, route, its body served bare) per route, median ratios`)
  const reads = await measureReads(baseline.url, server.url, targets, opts.seconds, log)
  const memoryAfterReads = memory(server.pid)

  const postCount = opts.small ? 1000 : 3000
  let posts: Awaited<ReturnType<typeof signedPosts>> | null = null
  if (selected('signed POST entry') || selected('upload')) {
    log(`bench: ${postCount} signed POST entries (1 KiB), 50 workers`)
    posts = await signedPosts(server.url, postCount)
    log(`bench: ${posts.rps.toFixed(0)} req/s ${JSON.stringify(posts.statuses)}${posts.first_error ? ` first error: ${posts.first_error}` : ''}`)
  }
  let up: Awaited<ReturnType<typeof upload>> | null = null
  if (posts && selected('upload')) {
    log('bench: largest allowed upload')
    up = await upload(server.url, server.pid, posts.feed_ids[0]!, scratch)
    log(`bench: upload ${up.payload_bytes} B: ${up.status} in ${up.ms.toFixed(0)} ms (floor ${up.floor_ms.toFixed(0)} ms); 50 MiB: ${up.over_limit?.status}`)
  }
  let writes: Awaited<ReturnType<typeof signedWrites>> = []
  if (selected('signed writes')) {
    const writeCount = opts.small ? 500 : 1000
    log(`bench: signed writes, ${writeCount} of each, 50 workers`)
    writes = await signedWrites(server.url, writeCount, log)
  }
  let down: Awaited<ReturnType<typeof downloads>> | null = null
  if (selected('downloads')) {
    log('bench: 16 concurrent downloads of the 37 MiB entry')
    down = await downloads(server.url, server.pid, m.big_entry)
  }
  const memoryAtEnd = memory(server.pid)
  await server.stop()

  let refresh: Awaited<ReturnType<typeof duringRefresh>> | null = null
  if (selected('refresh')) {
    log('bench: read latency during stats refresh (second server, TRELLIS_STATS_REFRESH_S=2)')
    refresh = await duringRefresh(BINARY, dataDir, `/v1/feeds/${m.hot_feed_id}`, opts.seconds, PROBE)
  }

  const rows = [
    ...reads.map(readRow),
    ...writes.map(writeRow),
    ...otherRows({ startMs: server.startMs, rssAfterWarmUp, refresh, posts, upload: up, downloads: down }).filter((row) => selected(row.measure)),
  ]
  const baselines = reads.flatMap((r) => r.pairs.map((p) => p.baseline.rps))
  const baselineMean = baselines.reduce((a, b) => a + b, 0) / baselines.length
  console.log(`\n${printTable(rows, baselineMean)}`)

  const results = {
    date: started.toISOString(),
    duration_s: Math.round((Date.now() - started.getTime()) / 1000),
    git,
    commands: {
      run: `npx bun scripts/bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
      build: 'npm run build',
      wrk: `wrk -t2 -c50 -d${opts.seconds}s --latency --timeout 10s <url>`,
      server_env: { TRELLIS_HOST: '127.0.0.1', TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn', ...MAIN_ENV },
    },
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memory_bytes: totalmem(), kernel: release(), bun: Bun.version, wrk: sh(['sh', '-c', 'wrk -v 2>&1 | head -1']) },
    options: opts,
    seed: { reused: seeded.reused, cache_dir: seeded.dir, manifest: m },
    start_to_first_200_ms: server.startMs,
    startup_jobs_finished_after_first_200_ms: jobsMs,
    rss_after_warm_up_bytes: rssAfterWarmUp,
    memory_after_reads: memoryAfterReads,
    memory_at_end: memoryAtEnd,
    reads: reads.map((r) => ({ name: r.target.name, path: r.target.path, group: r.target.group, expect: r.target.expect, probe: r.probe, ratio: r.ratio, ratio_to_same_body: r.ratioToSameBody, baseline: r.baseline, result: r.result, pairs: r.pairs })),
    signed_posts: posts,
    signed_writes: writes,
    upload: up,
    downloads: down,
    refresh,
    rows,
  }
  writeFileSync(resolve(opts.out), JSON.stringify(results, null, 2) + '\n')
  log(`bench: wrote ${resolve(opts.out)} (${results.duration_s} s)`)
} catch (error) {
  console.error(`bench: ${(error as Error).stack ?? error}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
