// The whole benchmark, from a fresh clone, in one command:
//
//   npx bun scripts/bench/run.ts [--small] [--seconds N] [--out file.json] [--only name,name] [--memo-off]
//                                [--postgres | --database-url postgres://admin@host:port/postgres]
//                                [--instances N [--balancer nginx|bun]]
//
// --only: just the measures whose name contains one of the given texts (case-insensitive), e.g.
// --only recent-entries,image; the other measures (writes, upload, downloads, refresh) run only when named too.
// --memo-off: the servers keep no read results (TRELLIS_READ_MEMO_MB=0): list pages are measured uncached.
//
// --postgres / --database-url: PostgreSQL beside the embedded default, in the same run. A database is created in the
// cluster (a throwaway one started for the run with --postgres; with --database-url, the cluster that admin URL
// reaches, whose role may CREATE DATABASE) before anything is measured; after the embedded server's measures it is
// filled with the seeded market by `dist/trellis migrate-to-postgres` (timed; its verify must be clean), vacuumed and
// analyzed, and the same measures run against a server on it; the database is dropped at the end. See
// docs/performance.md, "PostgreSQL beside the embedded engine".
//
// --instances N (with PostgreSQL): then the same measures once more against N servers on that database behind a
// balancer (--balancer nginx, the default: docs/examples/nginx.conf, installed from Debian when missing; or bun:
// dev/balancer.ts), and the balancer's own ceiling (the bare server behind it). The
// PostgreSQL figures count statements per request (pg_stat_statements, loaded in the throwaway cluster). See
// docs/scale-out.md, "Measured".
//
// Installs wrk if missing, builds dist/trellis, seeds (or reuses) a market-sized data directory, then measures
// the server against a bare Bun.serve in the same run and prints/writes every figure against its target.
// See docs/performance.md.
import { cpus, release, tmpdir, totalmem } from 'node:os'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ensureWrk } from './wrk.ts'
import { freshCopy, seededDir } from './dataset.ts'
import { freePort, jobsSettled, memory, startBalancerProcess, startBaseline, startTrellis } from './processes.ts'
import { balancerCeiling, compareInstances, printInstances } from './instances.ts'
import { startNginx } from './nginx.ts'
import { measureReads, PAIRS, readTargets, warmUp } from './measure-reads.ts'
import { discover, spreadOverPages } from './routes.ts'
import { signedPosts, upload } from './measure-writes.ts'
import { ADMIN_KEY, signedWrites } from './measure-signed-writes.ts'
import { downloads } from './measure-downloads.ts'
import { duringRefresh } from './measure-refresh.ts'
import { LIST_PAGES, compareEngines, otherRows, printComparison, printResources, printTable, readRow, writeRow } from './report.ts'
import { resourceLog } from './resources.ts'
import { migrateToPostgres, openCluster } from './postgres.ts'
import type { Manifest } from './seed.ts'

const ROOT = resolve(import.meta.dir, '..', '..')
const BINARY = join(ROOT, 'dist', 'trellis')
const PROBE = '/v1/leaderboards/top-revenue'
// No scheduled rebuild inside the throughput runs; the cost of rebuilds is measured on its own (measure-refresh.ts).
// The admin key opens the category administration routes, measured with the other writes.
const MAIN_ENV: Record<string, string> = { TRELLIS_STATS_REFRESH_S: '3600', TRELLIS_ADMIN_KEY: ADMIN_KEY }

function options() {
  const args = process.argv.slice(2)
  const usage =
    'Usage: npx bun scripts/bench/run.ts [--small] [--seconds N] [--out file.json] [--only ' +
    'name,name] [--memo-off] [--postgres | --database-url <admin postgres:// URL>] [--instances N ' +
    '[--balancer nginx|bun]]'
  const opts = {
    small: false,
    seconds: 3,
    out: 'bench-results.json',
    only: [] as string[],
    postgres: false,
    databaseUrl: null as string | null,
    memoOff: false,
    instances: 1,
    balancer: 'nginx' as 'nginx' | 'bun',
  }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--small') opts.small = true
    else if (args[i] === '--seconds' && /^\d+$/.test(args[i + 1] ?? '') && Number(args[i + 1]) > 0) opts.seconds = Number(args[++i])
    else if (args[i] === '--out' && args[i + 1]) opts.out = args[++i]!
    else if (args[i] === '--only' && args[i + 1])
      opts.only = args[++i]!.split(',')
        .map((n) => n.trim().toLowerCase())
        .filter(Boolean)
    else if (args[i] === '--postgres') opts.postgres = true
    else if (args[i] === '--memo-off') opts.memoOff = true
    else if (args[i] === '--database-url' && /^postgres(ql)?:\/\//.test(args[i + 1] ?? '')) opts.databaseUrl = args[++i]!
    else if (args[i] === '--instances' && /^\d+$/.test(args[i + 1] ?? '') && Number(args[i + 1]) >= 1) opts.instances = Number(args[++i])
    else if (args[i] === '--balancer' && (args[i + 1] === 'nginx' || args[i + 1] === 'bun')) opts.balancer = args[++i] as 'nginx' | 'bun'
    else {
      console.error(usage)
      process.exit(2)
    }
  }
  if (opts.postgres && opts.databaseUrl) {
    console.error(`--postgres starts a cluster of its own; --database-url names one: give one of them\n${usage}`)
    process.exit(2)
  }
  if (opts.instances > 1 && !opts.postgres && !opts.databaseUrl) {
    console.error(`--instances: several servers share a PostgreSQL database: give --postgres or --database-url too\n${usage}`)
    process.exit(2)
  }
  return opts
}

const sh = (cmd: string[]) => Bun.spawnSync(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' }).stdout.toString().trimEnd()

function build(log: (line: string) => void) {
  log('bench: npm run build')
  const result = Bun.spawnSync(['npm', 'run', 'build', '--silent'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const output = `${result.stdout}${result.stderr}`
    .split('\n')
    .filter((l) => l && !l.startsWith('npm warn'))
    .join('\n')
  if (result.exitCode !== 0) throw new Error(`npm run build failed (exit ${result.exitCode}):\n${output}`)
  log(output)
}

const opts = options()
/** The balancer in front of several instances (and of the bare server, for its ceiling). */
const startBalancer = (port: number, targets: string[]) =>
  opts.balancer === 'nginx' ? startNginx(port, targets, log) : startBalancerProcess(port, targets)
// Uncached reads: every server of the run keeps no read results, so each list page is read from the records.
if (opts.memoOff) MAIN_ENV.TRELLIS_READ_MEMO_MB = '0'
const withPostgres = opts.postgres || opts.databaseUrl !== null
/** Whether a measure runs: every one, or with --only those whose name contains one of its texts. */
const selected = (name: string) => opts.only.length === 0 || opts.only.some((text) => name.toLowerCase().includes(text))
const log = (line: string) => console.log(line)
const cleanups: (() => unknown)[] = []
const cleanup = async () => {
  for (const fn of cleanups.splice(0).reverse())
    await Promise.resolve()
      .then(fn)
      .catch((e) => console.error(`bench: cleanup: ${e}`))
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanup().then(() => process.exit(130)))

interface Engine {
  name: 'embedded' | 'postgres'
  /** Servers on the engine's records: more than one stand behind the balancer (PostgreSQL). */
  instances: number
  /** Behind the balancer even when one (the hop's own cost, told apart from the instances'). */
  balanced?: boolean
  dataDir: string
  /** The main server's environment (the refresh server's adds `refreshEnv` only). */
  env: Record<string, string>
  refreshEnv: Record<string, string>
  /** The cluster's postmaster, whose processes are counted beside the server's. */
  postmaster: number | null
  /** Statements the database ran so far (null: not counted). */
  statements?: () => Promise<number | null>
}

/** N servers on one database (each with a data directory of its own for its caches) behind dev/balancer.ts. */
async function startInstances(engine: Engine, env: Record<string, string>) {
  const balancerPort = freePort()
  const publicUrl = `http://127.0.0.1:${balancerPort}`
  const servers: Awaited<ReturnType<typeof startTrellis>>[] = []
  const stopAll = async () => {
    for (const server of servers) await server.stop()
  }
  try {
    for (let i = 0; i < engine.instances; i++) {
      const dataDir = i === 0 ? engine.dataDir : mkdtempSync(join(tmpdir(), 'trellis-bench-instance-'))
      if (i > 0) cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
      servers.push(await startTrellis(BINARY, dataDir, { ...env, TRELLIS_PUBLIC_URL: publicUrl }, PROBE))
    }
    const balancer = await startBalancer(
      balancerPort,
      servers.map((server) => server.url),
    )
    log(
      `bench: ${opts.balancer === 'nginx' ? 'nginx (docs/examples/nginx.conf)' : 'dev/balancer.ts'} ` +
        `at ${balancer.url} in front of ${servers.map((server) => server.url).join(', ')}`,
    )
    const healths = await Promise.all(
      servers.map((server) => fetch(`${server.url}/health`).then((r) => r.json() as Promise<{ leader: boolean }>)),
    )
    const leader = servers[healths.findIndex((h) => h.leader)] ?? servers[0]!
    return {
      pid: servers[0]!.pid,
      url: balancer.url,
      startMs: servers[0]!.startMs,
      leaderUrl: leader.url,
      pids: servers.map((server) => server.pid),
      tail: () => servers.map((server) => server.tail()).join('\n'),
      stop: async () => {
        await balancer.stop()
        await stopAll()
      },
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}

/** Every measure, on one server (and the refresh one on the same data): the figures of one engine. */
async function measureEngine(engine: Engine, m: Manifest, baselineUrl: string, scratch: string) {
  // The embedded run prints as it always has; the PostgreSQL run's lines say which they are.
  const behind = engine.instances > 1 || engine.balanced === true
  const label = behind ? `postgres ×${engine.instances} behind ${opts.balancer}` : engine.name
  const say = engine.name === 'embedded' ? log : (line: string) => log(line.replace(/^bench: /, `bench [${label}]: `))
  let pid: number | null = null
  const resources = resourceLog(() => pid, engine.postmaster)
  say(
    `bench: starting dist/trellis ` +
      `on ${engine.dataDir}${engine.name === 'postgres' ? ' (caches only) with TRELLIS_DATABASE_URL' : ''}` +
      `${behind ? `, ${engine.instances} behind the balancer (CPU and memory figures: the first instance's)` : ''}`,
  )
  const env = { ...MAIN_ENV, ...engine.env }
  const server = await (behind
    ? startInstances(engine, env)
    : startTrellis(BINARY, engine.dataDir, env, PROBE).then((one) => ({ ...one, leaderUrl: one.url, pids: [one.pid] }))
  ).catch((error) => {
    resources.stop()
    throw error
  })
  pid = server.pid
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    pid = null
    await server.stop()
  }
  cleanups.push(stop)
  resources.mark('start to first 200')
  say(`bench: first 200 on ${PROBE} ${server.startMs.toFixed(0)} ms after spawn`)

  // The once-per-database jobs run on the leader only.
  const jobsMs = await jobsSettled(server.leaderUrl)
  say(`bench: start-up jobs (statistics, ranks, ledger check) finished ${(jobsMs / 1000).toFixed(1)} s after the first 200`)
  resources.mark('start-up jobs')
  const found = readTargets(m, await discover(server.url, m)).filter((t) => selected(t.name))
  // Memo off: the list pages' requests each name another page, so none is answered from another's read.
  const targets = opts.memoOff
    ? await Promise.all(found.map((t) => (LIST_PAGES.includes(t.group) ? spreadOverPages(server.url, t) : t)))
    : found
  await warmUp(server.url, targets, 5)
  const rssAfterWarmUp = memory(server.pid).rss
  resources.mark('warm-up')
  say(
    `bench: RSS after warm-up ${(rssAfterWarmUp / 1048576).toFixed(0)} MiB; wrk -t2 -c50 ` +
      `-d${opts.seconds}s per run, ${PAIRS} rounds (baseline, route, its body served bare) per route, ` +
      `median ratios`,
  )
  // One route at a time, so each route's CPU (the server's and the cluster's) is known: which reads reach the database.
  const reads: Awaited<ReturnType<typeof measureReads>> = []
  /** Statements per request answered, by measure (the projection in docs/scale-out.md reads them). */
  const statements: Record<string, number | null> = {}
  const counted = async (name: string, requests: () => number, work: () => Promise<unknown>) => {
    const before = (await engine.statements?.()) ?? null
    await work()
    const after = (await engine.statements?.()) ?? null
    statements[name] = before === null || after === null || requests() === 0 ? null : (after - before) / requests()
  }
  for (const target of targets) {
    let measured: typeof reads = []
    await counted(
      target.name,
      () => measured.reduce((sum, r) => sum + r.pairs.reduce((n, p) => n + p.result.requests, 0) + r.pairs.length /* probes */, 0),
      async () => {
        measured = await measureReads(baselineUrl, server.url, [target], opts.seconds, say)
      },
    )
    reads.push(...measured)
    resources.lap(target.name)
  }
  const memoryAfterReads = memory(server.pid)
  resources.mark('reads')

  const postCount = opts.small ? 1000 : 3000
  let posts: Awaited<ReturnType<typeof signedPosts>> | null = null
  if (selected('signed POST entry') || selected('upload')) {
    say(`bench: ${postCount} signed POST entries (1 KiB), 50 workers`)
    await counted(
      'signed POST entry',
      () => postCount,
      async () => {
        posts = await signedPosts(server.url, postCount, () => resources.mark('signed POST: feeds and nonces (before the clock)'))
      },
    )
    posts = posts!
    say(
      `bench: ${posts.rps.toFixed(0)} ` +
        `req/s ${JSON.stringify(posts.statuses)}${posts.first_error ? ` first error: ${posts.first_error}` : ''}`,
    )
    resources.mark('signed POST entry')
  }
  let up: Awaited<ReturnType<typeof upload>> | null = null
  if (posts && selected('upload')) {
    say('bench: largest allowed upload')
    up = await upload(server.url, server.pid, posts.feed_ids[0]!, scratch)
    say(
      `bench: upload ${up.payload_bytes} B: ${up.status} in ${up.ms.toFixed(0)} ms ` +
        `(floor ${up.floor_ms.toFixed(0)} ms); 50 MiB: ${up.over_limit?.status}`,
    )
    resources.mark('upload')
  }
  let writes: Awaited<ReturnType<typeof signedWrites>> = []
  if (selected('signed writes')) {
    const writeCount = opts.small ? 500 : 1000
    say(`bench: signed writes, ${writeCount} of each, 50 workers`)
    writes = await signedWrites(server.url, writeCount, say)
    resources.mark('signed writes')
  }
  let down: Awaited<ReturnType<typeof downloads>> | null = null
  if (selected('downloads')) {
    say('bench: 16 concurrent downloads of the 37 MiB entry')
    down = await downloads(server.url, server.pid, m.big_entry)
    resources.mark('downloads')
  }
  const memoryAtEnd = memory(server.pid)
  await stop()

  let refresh: Awaited<ReturnType<typeof duringRefresh>> | null = null
  if (selected('refresh') && !behind) {
    say('bench: read latency during stats refresh (second server, TRELLIS_STATS_REFRESH_S=2)')
    refresh = await duringRefresh(BINARY, engine.dataDir, `/v1/feeds/${m.hot_feed_id}`, opts.seconds, PROBE, engine.refreshEnv)
    resources.mark('refresh (second server: the cluster only)')
  }

  const rows = [
    ...reads.map(readRow),
    ...writes.map(writeRow),
    ...otherRows({ startMs: server.startMs, rssAfterWarmUp, refresh, posts, upload: up, downloads: down }).filter((row) =>
      selected(row.measure),
    ),
  ]
  return {
    instances: engine.instances,
    startMs: server.startMs,
    jobsMs,
    rssAfterWarmUp,
    memoryAfterReads,
    memoryAtEnd,
    reads,
    posts,
    up,
    writes,
    down,
    refresh,
    rows,
    statements,
    resources: resources.stop(),
  }
}
type EngineRun = Awaited<ReturnType<typeof measureEngine>>

/** An engine's figures as the results file holds them (the embedded one at the top level, as before). */
const engineJson = (run: EngineRun) => ({
  start_to_first_200_ms: run.startMs,
  startup_jobs_finished_after_first_200_ms: run.jobsMs,
  rss_after_warm_up_bytes: run.rssAfterWarmUp,
  memory_after_reads: run.memoryAfterReads,
  memory_at_end: run.memoryAtEnd,
  reads: run.reads.map((r) => ({
    name: r.target.name,
    path: r.target.path,
    group: r.target.group,
    expect: r.target.expect,
    probe: r.probe,
    ratio: r.ratio,
    ratio_to_same_body: r.ratioToSameBody,
    baseline: r.baseline,
    result: r.result,
    pairs: r.pairs,
  })),
  signed_posts: run.posts,
  signed_writes: run.writes,
  upload: run.up,
  downloads: run.down,
  refresh: run.refresh,
  resources: run.resources,
  rows: run.rows,
  statements_per_request: run.statements,
})

try {
  const started = new Date()
  ensureWrk(log)
  // The source state the binary is built from (src/ may change while the benchmark runs).
  const git = {
    commit: sh(['git', 'rev-parse', 'HEAD']),
    uncommitted: sh(['git', 'status', '--porcelain', '--', 'src']).split('\n').filter(Boolean),
  }
  build(log)
  const seeded = await seededDir(opts.small, log)
  const m = seeded.manifest
  const dataDir = freshCopy(seeded.dir)
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-bench-scratch-'))
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }))

  // The cluster first, so a PostgreSQL that cannot be used stops the run before the embedded measures.
  const cluster = withPostgres ? await openCluster(opts.databaseUrl, log) : null
  if (cluster) cleanups.push(() => cluster.close())
  const database = cluster ? await cluster.createDatabase() : null

  const baseline = await startBaseline()
  cleanups.push(() => baseline.stop())
  const embedded = await measureEngine(
    { name: 'embedded', instances: 1, dataDir, env: {}, refreshEnv: {}, postmaster: null },
    m,
    baseline.url,
    scratch,
  )

  let instances: null | { run: EngineRun; oneBehind: EngineRun; ceiling: Awaited<ReturnType<typeof balancerCeiling>> } = null
  let postgres: null | {
    cluster: Omit<Awaited<ReturnType<typeof openCluster>>, 'createDatabase' | 'settle' | 'close' | 'statements'>
    database: string
    migrate: Awaited<ReturnType<typeof migrateToPostgres>>
    settle: Awaited<ReturnType<NonNullable<typeof cluster>['settle']>>
    run: EngineRun
  } = null
  if (cluster && database) {
    // A fresh copy of the seeded directory: migrate-to-postgres reads it (and leaves it as it was); then what it moved
    // is removed from it, and the server on PostgreSQL runs with it as its data directory, where it keeps caches and
    // the upload spool only (and could not read the embedded records or blocks by mistake).
    const pgDir = freshCopy(seeded.dir)
    cleanups.push(() => rmSync(pgDir, { recursive: true, force: true }))
    const postmaster =
      cluster.postmaster === null ? ' (not on this machine: no CPU or memory figures for it)' : ` (postmaster pid ${cluster.postmaster})`
    log(`bench: PostgreSQL ${cluster.version} at ${cluster.shown}${postmaster}; database ${database.name}`)
    log(`bench: dist/trellis migrate-to-postgres of the seeded market`)
    const migrate = await migrateToPostgres(BINARY, pgDir, database.url, cluster.postmaster)
    log(
      `bench: migrate-to-postgres exit ${migrate.exit_code} in ${(migrate.ms / 1000).toFixed(1)} s; ` +
        `moved ${JSON.stringify(migrate.moved)}; ` +
        `verify ${migrate.verify ? (migrate.verify.ok ? 'clean' : 'NOT clean') : 'did not run'}`,
    )
    if (!migrate.moved) throw new Error(`migrate-to-postgres failed (exit ${migrate.exit_code}):\n${migrate.stderr}`)
    if (!migrate.clean) log(`bench: migrate-to-postgres: ${JSON.stringify(migrate.verify).slice(0, 2000)}\n${migrate.stderr}`)
    for (const moved of ['trellis.db', 'trellis.db-wal', 'trellis.db-shm', 'blocks', 'datastore', 'secret.key'])
      rmSync(join(pgDir, moved), { recursive: true, force: true })
    const settle = await cluster.settle(database.url)
    log(`bench: ${[...settle.done, ...settle.skipped].join('; ')} in ${(settle.ms / 1000).toFixed(1)} s`)
    // The N-instance run gets the same market, untouched by the one-instance run's writes (categories it created would
    // lengthen category-stats, and would be created again): a copy made now.
    const copies = opts.instances > 1 ? [await cluster.createDatabase(database.name), await cluster.createDatabase(database.name)] : null
    if (copies)
      log(
        `bench: databases ${copies.map((c) => c.name).join(', ')}: copies of the migrated market, for 1 ` +
          `and ${opts.instances} instances behind the balancer`,
      )
    const env = { TRELLIS_DATABASE_URL: database.url }
    const statements = () => cluster.statements(database.name)
    const run = await measureEngine(
      { name: 'postgres', instances: 1, dataDir: pgDir, env, refreshEnv: env, postmaster: cluster.postmaster, statements },
      m,
      baseline.url,
      scratch,
    )
    const { createDatabase: _c, settle: _s, close: _cl, statements: _st, ...shown } = cluster
    postgres = { cluster: shown, database: database.name, migrate, settle, run }
    if (copies) {
      const behindOn = (copy: { name: string; url: string }, count: number) => {
        const env = { TRELLIS_DATABASE_URL: copy.url }
        return measureEngine(
          {
            name: 'postgres',
            instances: count,
            balanced: true,
            dataDir: pgDir,
            env,
            refreshEnv: env,
            postmaster: cluster.postmaster,
            statements: () => cluster.statements(copy.name),
          },
          m,
          baseline.url,
          scratch,
        )
      }
      const oneBehind = await behindOn(copies[0]!, 1)
      const many = await behindOn(copies[1]!, opts.instances)
      log(`bench: the balancer's own ceiling (${opts.balancer}): the bare server behind it, ${PAIRS} rounds`)
      const ceiling = await balancerCeiling(baseline.url, opts.seconds, startBalancer)
      instances = { run: many, oneBehind, ceiling }
    }
  }

  const allReads = [...embedded.reads, ...(postgres?.run.reads ?? [])]
  const baselines = allReads.flatMap((r) => r.pairs.map((p) => p.baseline.rps))
  const baselineMean = baselines.reduce((a, b) => a + b, 0) / baselines.length
  if (postgres) console.log('\nEmbedded (SQLite and LevelDB in the data directory):')
  console.log(`\n${printTable(embedded.rows, baselineMean)}`)
  let comparison = null
  if (postgres) {
    console.log(
      `\nPostgreSQL ${postgres.cluster.version} (records and content), the same measures against the ` +
        `same targets:\n\n${printTable(postgres.run.rows, baselineMean)}`,
    )
    comparison = compareEngines(embedded, postgres.run, postgres.migrate, opts.memoOff)
    console.log(`\nPostgreSQL beside embedded (issue 21 targets):\n\n${printComparison(comparison)}`)
    console.log(`\n${printResources(embedded.resources, postgres.run.resources, postgres.migrate)}`)
  }
  const scaling =
    postgres && instances ? compareInstances(embedded, postgres.run, instances.oneBehind, instances.run, instances.ceiling) : null
  if (scaling)
    console.log(
      `\nEmbedded, 1 instance, ${opts.instances} instances behind the balancer (ratios to bare Bun.serve):\n\n${printInstances(scaling)}`,
    )

  const results = {
    date: started.toISOString(),
    duration_s: Math.round((Date.now() - started.getTime()) / 1000),
    git,
    commands: {
      run: `npx bun scripts/bench/run.ts ${process.argv
        .slice(2)
        .map((a) => (/^postgres(ql)?:/.test(a) ? '<admin url>' : a))
        .join(' ')}`.trim(),
      build: 'npm run build',
      wrk: `wrk -t2 -c50 -d${opts.seconds}s --latency --timeout 10s <url>`,
      server_env: { TRELLIS_HOST: '127.0.0.1', TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn', ...MAIN_ENV },
      ...(postgres ? { migrate: postgres.migrate.command, postgres_server_env: { TRELLIS_DATABASE_URL: "<the run's database>" } } : {}),
    },
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memory_bytes: totalmem(),
      kernel: release(),
      bun: Bun.version,
      wrk: sh(['sh', '-c', 'wrk -v 2>&1 | head -1']),
    },
    options: { ...opts, databaseUrl: opts.databaseUrl && '<admin url>' },
    seed: { reused: seeded.reused, cache_dir: seeded.dir, manifest: m },
    ...engineJson(embedded),
    ...(postgres
      ? {
          postgres: {
            cluster: postgres.cluster,
            database: postgres.database,
            migrate: postgres.migrate,
            settle: postgres.settle,
            ...engineJson(postgres.run),
            comparison,
          },
        }
      : {}),
    ...(instances
      ? {
          instances: {
            count: opts.instances,
            ...engineJson(instances.run),
            one_behind: engineJson(instances.oneBehind),
            balancer_ceiling: instances.ceiling,
            scaling,
          },
        }
      : {}),
  }
  writeFileSync(resolve(opts.out), JSON.stringify(results, null, 2) + '\n')
  log(`bench: wrote ${resolve(opts.out)} (${results.duration_s} s)`)
} catch (error) {
  console.error(`bench: ${(error as Error).stack ?? error}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
