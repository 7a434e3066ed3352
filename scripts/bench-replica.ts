// Read replicas, measured (issue 41): what a streaming replica takes off the primary, and how a read after a write
// is best kept fresh.
//
//   npx bun scripts/bench-replica.ts [--builds N] [--probes N] [--out file.json]
//
// A throwaway primary (dev/postgres.ts) is filled with the small seeded market (scripts/bench/seed.ts: 1,000 feeds,
// 10,000 entries, 100,000 ledger rows) by `trellis migrate-to-postgres`, then a replica is made of it (dev/replica.ts).
// 1. The leaderboard build and the wallet ranks, as the long-reads thread runs them, N times on records without a
//    replica, then N times on records with one: the CPU time of each cluster's processes (scripts/bench/resources.ts)
//    per build, and the build's time.
// 2. Read-your-writes, two ways, each right after an INSERT committed on the primary (one probe table, a page of its
//    newest 20 rows read back): routed to the primary (what Trellis does: replicas.ts), or waiting on the replica
//    until pg_last_wal_replay_lsn() passes the primary's pg_current_wal_insert_lsn() taken after the commit, then
//    reading there. Idle, and with another connection inserting meanwhile (replay has work to do).
import { SQL } from 'bun'
import { writeFileSync } from 'node:fs'
import { startPostgres } from '../dev/postgres.ts'
import { startReplica } from '../dev/replica.ts'
import { emptyDatabase } from '../dev/test-database.ts'
import { anySeededDir, freshCopy } from './bench/dataset.ts'
import { clusterUsage, postmasterOf } from './bench/resources.ts'
import { openRecords } from '../src/store/open.ts'
import type { Records } from '../src/store/stores.ts'
import { buildLeaderboards } from '../src/domain/leaderboards.ts'
import { nowSeconds } from '../src/lib/clock.ts'

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback)
const BUILDS = option('--builds', 5)
const PROBES = option('--probes', 300)
const out = args.includes('--out') ? args[args.indexOf('--out') + 1]! : null
const log = (line: string) => process.stderr.write(`${line}\n`)

const primary = await startPostgres()
let replica: Awaited<ReturnType<typeof startReplica>> | null = null
try {
  const url = await emptyDatabase(primary.adminUrl)
  const seeded = await anySeededDir(true, log)
  const dataDir = freshCopy(seeded.dir)
  log('bench-replica: migrate-to-postgres of the small market')
  const moved = Bun.spawnSync([process.execPath, 'src/main.ts', 'migrate-to-postgres', '--data-dir', dataDir, '--database-url', url], {
    env: { ...process.env, TRELLIS_LOG: 'warn' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (moved.exitCode !== 0) throw new Error(`migrate-to-postgres failed: ${moved.stderr.toString()}`)
  const admin = new SQL(url, { max: 1 })
  await admin.unsafe('VACUUM ANALYZE')
  await admin.unsafe('CREATE TABLE ryw_probe (id bigserial PRIMARY KEY, v int NOT NULL)')
  log('bench-replica: pg_basebackup -R')
  replica = await startReplica(primary.port)
  const replicaUrl = replica.urlOf(new URL(url).pathname.slice(1))
  const primaryPm = (await postmasterOf(admin))!
  const replicaPm = replica.postmasterPid()

  const place = { engine: 'postgres' as const, url, pool: 2, application: 'bench long reads' }
  const plain = await openRecords(place, 'readonly')
  const replicated = await openRecords({ ...place, replicaUrls: [replicaUrl], replicaMaxLagS: 5 }, 'readonly')
  for (let i = 0; !replicated.replicas!.status()[0]!.inUse; i++) {
    if (i > 100) throw new Error('the replica never came into use')
    await Bun.sleep(100)
  }

  const build = async (records: Records) => {
    await records.snapshot((view) => buildLeaderboards(view.stats, nowSeconds()))
    await records.reads.stats.ranks()
  }
  const measureBuilds = async (records: Records) => {
    await build(records) // warm: plans and caches
    const before = { primary: clusterUsage(primaryPm).cpu_s, replica: clusterUsage(replicaPm).cpu_s }
    const started = performance.now()
    for (let i = 0; i < BUILDS; i++) await build(records)
    const ms = (performance.now() - started) / BUILDS
    return {
      build_ms: Math.round(ms),
      primary_cpu_s_per_build: round((clusterUsage(primaryPm).cpu_s - before.primary) / BUILDS),
      replica_cpu_s_per_build: round((clusterUsage(replicaPm).cpu_s - before.replica) / BUILDS),
    }
  }
  log(`bench-replica: ${BUILDS} builds without a replica, then ${BUILDS} with one`)
  const builds = { without_replica: await measureBuilds(plain), with_replica: await measureBuilds(replicated) }
  await plain.close()
  await replicated.close()

  const writer = new SQL(url, { max: 1 })
  const onPrimary = new SQL(url, { max: 1 })
  const onReplica = new SQL(replicaUrl, { max: 1 })
  const PAGE = 'SELECT id FROM ryw_probe ORDER BY id DESC LIMIT 20'
  const insert = async () => Number((await writer.unsafe('INSERT INTO ryw_probe (v) VALUES (1) RETURNING id'))[0].id)
  const strategies = {
    primary: async (id: number) => (await onPrimary.unsafe(PAGE))[0].id >= id,
    wait_for_replay: async (id: number) => {
      const [{ position }] = await onPrimary.unsafe('SELECT pg_current_wal_insert_lsn()::text AS position')
      while (!(await onReplica.unsafe('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [position]))[0].done);
      return Number((await onReplica.unsafe(PAGE))[0].id) >= id
    },
  }
  const probe = async (how: keyof typeof strategies) => {
    const ms: number[] = []
    for (let i = 0; i < PROBES; i++) {
      const id = await insert()
      const started = performance.now()
      if (!(await strategies[how](id))) throw new Error(`${how}: the write was not read back`)
      ms.push(performance.now() - started)
    }
    return percentiles(ms)
  }
  log(`bench-replica: ${PROBES} reads after a write, each way, idle and busy`)
  const ryw: Record<string, unknown> = {}
  for (const how of ['primary', 'wait_for_replay'] as const) ryw[`${how}_idle`] = await probe(how)
  // Busy: another connection inserts without pause meanwhile.
  const busy = new SQL(url, { max: 1 })
  let busyOn = true
  const load = (async () => {
    while (busyOn) await busy.unsafe('INSERT INTO ryw_probe (v) VALUES (2)')
  })()
  for (const how of ['primary', 'wait_for_replay'] as const) ryw[`${how}_busy`] = await probe(how)
  busyOn = false
  await load
  for (const sql of [writer, onPrimary, onReplica, busy, admin]) await sql.close()

  const result = { market: seeded.manifest.counts, builds: BUILDS, probes: PROBES, leaderboard_builds: builds, read_your_writes_ms: ryw }
  console.log(JSON.stringify(result, null, 2))
  if (out) writeFileSync(out, JSON.stringify(result, null, 2))
} finally {
  await replica?.stop()
  await primary.stop()
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000
}

function percentiles(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b)
  const at = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!)
  return { p50: at(50), p90: at(90), p99: at(99), max: round(sorted.at(-1)!) }
}
