// Signed POST on PostgreSQL against embedded, with the database on a core of its own. run.ts measures both engines
// as an operator with one 2-core machine would run them: Trellis, PostgreSQL and the load generator share the cores,
// so every CPU microsecond PostgreSQL spends is taken from Trellis. An operator who moves to PostgreSQL gives it a
// machine of its own; on a 2-core machine the nearest to that is one core for PostgreSQL and one for Trellis and its
// load generator (for the embedded run too, so both runs have the same cores for the application).
//
//   npx bun scripts/bench/signed-post-pinned.ts [--database-url <admin URL> | (a throwaway cluster)] [--rounds N] [--count N]
//
// Each round: a fresh data directory (and database), 10 signers' feeds, `count` signed 1 KiB POSTs from 50 workers
// (measure-writes.ts), embedded and PostgreSQL in turn; first every round shared, then every round pinned. Medians.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { signedPosts } from './measure-writes.ts'
import { openCluster } from './postgres.ts'
import { startTrellis } from './processes.ts'

const ROOT = join(import.meta.dir, '..', '..')
const BINARY = join(ROOT, 'dist', 'trellis')

function options() {
  const args = process.argv.slice(2)
  const opts = { databaseUrl: null as string | null, rounds: 3, count: 3000 }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--database-url') opts.databaseUrl = args[++i] ?? null
    else if (args[i] === '--rounds') opts.rounds = Number(args[++i])
    else if (args[i] === '--count') opts.count = Number(args[++i])
    else
      throw new Error(
        `unknown argument ${args[i]}; usage: npx bun scripts/bench/signed-post-pinned.ts ` +
          `[--database-url <admin URL>] [--rounds N] [--count N]`,
      )
  }
  return opts
}

/** Every thread of `pid` (and of the processes it starts from now on) on `cpus`. */
function pin(pid: number, cpuList: string) {
  const result = Bun.spawnSync(['taskset', '-a', '-cp', cpuList, String(pid)], { stdout: 'ignore', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`taskset ${cpuList} ${pid}: ${result.stderr.toString().trim()}`)
}

/** The postmaster and its running children (new backends are forked from the postmaster and inherit its cores). */
function pinCluster(postmaster: number, cpuList: string) {
  pin(postmaster, cpuList)
  const children = Bun.spawnSync(['pgrep', '-P', String(postmaster)])
    .stdout.toString()
    .split('\n')
    .filter(Boolean)
  for (const child of children) pin(Number(child), cpuList)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const opts = options()
if (cpus().length < 2) throw new Error('pinning needs at least 2 cores')
if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: npm run build`)
const cluster = await openCluster(opts.databaseUrl, console.log)
if (cluster.postmaster === null) throw new Error('the cluster does not run on this machine: it cannot be pinned')
const all = `0-${cpus().length - 1}`

async function round(engine: 'embedded' | 'postgres'): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bench-run-pinned-'))
  const env: Record<string, string> = engine === 'postgres' ? { TRELLIS_DATABASE_URL: (await cluster.createDatabase()).url } : {}
  const server = await startTrellis(BINARY, dataDir, env, '/health')
  try {
    const result = await signedPosts(server.url, opts.count)
    if (result.statuses['201'] !== opts.count) throw new Error(`${engine}: ${JSON.stringify(result.statuses)} ${result.first_error}`)
    return result.rps
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const figures: Record<string, { embedded: number[]; postgres: number[] }> = {}
try {
  for (const layout of ['shared', 'pinned'] as const) {
    if (layout === 'pinned') {
      pin(process.pid, '0') // Trellis and the load generator are started by this process: they inherit core 0
      pinCluster(cluster.postmaster, '1')
    }
    const runs = (figures[layout] = { embedded: [] as number[], postgres: [] as number[] })
    for (let r = 0; r < opts.rounds; r++) {
      for (const engine of ['embedded', 'postgres'] as const) {
        const rps = await round(engine)
        runs[engine].push(rps)
        console.log(`${layout} round ${r + 1} ${engine}: ${rps.toFixed(0)} req/s`)
      }
    }
  }
} finally {
  pin(process.pid, all)
  pinCluster(cluster.postmaster, all)
  await cluster.close()
}

console.log(
  `\nsigned POST entry, 1 KiB, ${opts.count} per round, 50 workers; medians of ${opts.rounds} rounds (PostgreSQL ${cluster.version})`,
)
console.log('layout                                         embedded      PostgreSQL    ratio')
for (const [layout, runs] of Object.entries(figures)) {
  const e = median(runs.embedded)
  const p = median(runs.postgres)
  const label = layout === 'shared' ? 'shared: all processes on both cores' : 'pinned: PostgreSQL core 1, the rest core 0'
  console.log(`${label.padEnd(46)} ${e.toFixed(0).padStart(6)} req/s  ${p.toFixed(0).padStart(6)} req/s  ${(p / e).toFixed(2)}`)
}
