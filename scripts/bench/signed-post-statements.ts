// Where PostgreSQL's time goes in a signed POST of an entry: a throwaway cluster with pg_stat_statements tracking
// every statement (the ones triggers run too), `count` signed 1 KiB POSTs from 50 workers (measure-writes.ts), then
// the statements by their total execution time, and the cluster's and Trellis's CPU per POST.
//
//   npx bun scripts/bench/signed-post-statements.ts [--count N] [--top N] [--setting name=value …]
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { startPostgres } from '../../dev/postgres.ts'
import { signedPosts } from './measure-writes.ts'
import { startTrellis } from './processes.ts'
import { urlOf } from './postgres.ts'
import { clusterUsage, postmasterOf, processUsage } from './resources.ts'

const BINARY = join(import.meta.dir, '..', '..', 'dist', 'trellis')
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const COUNT = arg('count', 2000)
const TOP = arg('top', 20)
/** More server settings for an experiment (autovacuum=off, …). */
const SETTINGS = process.argv.flatMap((value, at) => (process.argv[at - 1] === '--setting' ? [value] : []))
if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: npm run build`)

const cluster = await startPostgres({
  settings: [
    'shared_preload_libraries=pg_stat_statements',
    'pg_stat_statements.track=all',
    'pg_stat_statements.max=5000',
    'pg_stat_statements.track_planning=on',
    ...SETTINGS,
  ],
})
const admin = new SQL(cluster.adminUrl, { max: 1 })
const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bench-statements-'))
try {
  await admin.unsafe('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await admin.unsafe('CREATE DATABASE trellis_statements')
  const server = await startTrellis(BINARY, dataDir, { TRELLIS_DATABASE_URL: urlOf(cluster.adminUrl, 'trellis_statements') }, '/health')
  const postmaster = (await postmasterOf(admin))!
  try {
    let before = { pg: 0, trellis: 0 }
    // From here: the signers' feeds, and each POST's nonce request (as the bench counts a POST's statements).
    await admin.unsafe('SELECT pg_stat_statements_reset()')
    const result = await signedPosts(server.url, COUNT, () => {
      before = { pg: clusterUsage(postmaster).cpu_s, trellis: processUsage(server.pid).cpu_s }
    })
    const cpu = { pg: clusterUsage(postmaster).cpu_s - before.pg, trellis: processUsage(server.pid).cpu_s - before.trellis }
    if (result.statuses['201'] !== COUNT) throw new Error(`${JSON.stringify(result.statuses)} ${result.first_error}`)
    const rows = await admin.unsafe(
      `SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
        round((total_exec_time / NULLIF(calls, 0) * 1000)::numeric, 1) AS mean_us,
        round((total_plan_time / NULLIF(calls, 0) * 1000)::numeric, 1) AS plan_us,
        toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = 'trellis_statements' ORDER BY total_exec_time DESC LIMIT ${TOP}`,
    )
    // The feed's row takes every entry's slot: its updates, HOT or not, and what they left behind.
    const db = new SQL(urlOf(cluster.adminUrl, 'trellis_statements'), { max: 1 })
    const [feeds] = await db.unsafe(
      `SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot, pg_relation_size('feeds') AS heap, pg_indexes_size('feeds') AS indexes
       FROM pg_stat_user_tables WHERE relname = 'feeds'`,
    )
    await db.close()
    console.log(`feeds: ${feeds.updates} updates, ${feeds.hot} HOT; heap ${feeds.heap} bytes, indexes ${feeds.indexes} bytes`)
    const top = rows.filter((r: { toplevel: boolean }) => r.toplevel)
    const perPost = top.reduce((n: number, r: { calls: string }) => n + Number(r.calls), 0) / COUNT
    console.log(
      `${COUNT} signed POSTs: ${result.rps.toFixed(0)} req/s; per POST: PostgreSQL CPU ${((cpu.pg / COUNT) * 1e6).toFixed(0)} µs,`,
    )
    console.log(
      `Trellis CPU ${((cpu.trellis / COUNT) * 1e6).toFixed(0)} µs; top-level statements per POST ${perPost.toFixed(2)} (the ${TOP} below)`,
    )
    console.log(' calls  total ms  mean µs  plan µs  level  statement')
    for (const r of rows) {
      const figures = [
        [r.calls, 6],
        [r.total_ms, 9],
        [r.mean_us, 8],
        [r.plan_us, 8],
      ].map(([v, n]) => String(v).padStart(Number(n)))
      console.log(`${figures.join(' ')}  ${r.toplevel ? 'top  ' : 'inner'}  ${r.query}`)
    }
  } finally {
    await server.stop()
  }
} finally {
  await admin.close()
  await cluster.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
