// Embedded, one instance on PostgreSQL, and N instances on it behind a balancer (nginx, or dev/balancer.ts): the same
// measures side by side, each as its ratio to bare Bun.serve in the same run, and the balancer's own ceiling (the bare
// server behind it), so what the extra hop costs is told apart from what the instances cost. On one machine's cores no
// gain is expected: the bar is that the ratios hold within the hop's cost and that nothing answers wrongly.
import { PAIRS, type ReadResult } from './measure-reads.ts'
import { CACHED_HOT_READS, LIST_PAGES, answerProblems } from './report.ts'
import { freePort, type Child } from './processes.ts'
import { wrk } from './wrk.ts'

interface Run {
  instances: number
  startMs: number
  reads: ReadResult[]
  writes: Array<{ name: string; expect: number; count: number; rps: number; statuses: Record<string, number> }>
  posts: null | { rps: number; count: number; statuses: Record<string, number> }
  up: null | { ms: number; status: number | string }
  statements: Record<string, number | null>
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const geomean = (values: number[]) => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length)

/** The bare server direct, then behind the balancer, PAIRS times: the median ratio is the most the hop lets through. */
export async function balancerCeiling(
  baselineUrl: string,
  seconds: number,
  startBalancer: (port: number, targets: string[]) => Promise<Child>,
) {
  const balancer = await startBalancer(freePort(), [baselineUrl])
  try {
    const pairs = []
    for (let i = 0; i < PAIRS; i++) {
      const direct = await wrk(`${baselineUrl}/`, seconds)
      const behind = await wrk(`${balancer.url}/`, seconds)
      pairs.push({ direct_rps: direct.rps, behind_rps: behind.rps, ratio: behind.rps / direct.rps })
    }
    return { ratio: median(pairs.map((p) => p.ratio)), pairs }
  } finally {
    await balancer.stop()
  }
}

/** `of_ceiling`: a read's ratio behind the balancer over the balancer's own ceiling: what is left once the hop is set aside. */
export interface ScalingRow {
  measure: string
  embedded: string
  one: string
  oneBehind: string
  many: string
  of_ceiling?: string
  statements_per_request: string
  note: string
}

/** `oneBehind`: one instance behind the same balancer, so what the instances cost is told apart from what the hop does. */
export function compareInstances(embedded: Run, one: Run, oneBehind: Run, many: Run, ceiling: { ratio: number }) {
  const rows: ScalingRow[] = []
  const groups = { hot: [] as number[][], lists: [] as number[][] } // [embedded, one, one behind, many]
  const problems: string[] = []
  for (const m of many.reads) {
    const e = embedded.reads.find((r) => r.target.name === m.target.name)
    const o = one.reads.find((r) => r.target.name === m.target.name)
    const b = oneBehind.reads.find((r) => r.target.name === m.target.name)
    if (!e || !o || !b) continue
    const wrong = [...answerProblems(m), ...answerProblems(b).map((problem) => `1 behind: ${problem}`)]
    if (wrong.length) problems.push(`${m.target.name}: ${wrong.join(', ')}`)
    if (CACHED_HOT_READS.includes(m.target.group)) groups.hot.push([e.ratio, o.ratio, b.ratio, m.ratio])
    if (LIST_PAGES.includes(m.target.group)) groups.lists.push([e.ratio, o.ratio, b.ratio, m.ratio])
    const statements = one.statements[m.target.name]
    rows.push({
      measure: m.target.name,
      embedded: e.ratio.toFixed(2),
      one: o.ratio.toFixed(2),
      oneBehind: b.ratio.toFixed(2),
      many: m.ratio.toFixed(2),
      of_ceiling: (m.ratio / ceiling.ratio).toFixed(2),
      statements_per_request: statements === null || statements === undefined ? '' : statements.toFixed(2),
      note: wrong.join('; '),
    })
  }
  const group = (label: string, members: number[][]) =>
    members.length &&
    rows.unshift({
      measure: `${label} (${members.length} routes, geomean)`,
      embedded: geomean(members.map((r) => r[0]!)).toFixed(2),
      one: geomean(members.map((r) => r[1]!)).toFixed(2),
      oneBehind: geomean(members.map((r) => r[2]!)).toFixed(2),
      many: geomean(members.map((r) => r[3]!)).toFixed(2),
      of_ceiling: (geomean(members.map((r) => r[3]!)) / ceiling.ratio).toFixed(2),
      statements_per_request: '',
      note: '',
    })
  group('list pages', groups.lists)
  group('cached hot reads', groups.hot)
  rows.unshift({
    measure: "the balancer's ceiling (bare server behind it)",
    embedded: '',
    one: '',
    oneBehind: ceiling.ratio.toFixed(2),
    many: ceiling.ratio.toFixed(2),
    statements_per_request: '',
    note: 'the most any route can reach through the hop',
  })
  if (embedded.posts && one.posts && oneBehind.posts && many.posts) {
    const posted = many.posts.statuses['201'] ?? 0
    if (posted !== many.posts.count) problems.push(`signed POST: ${JSON.stringify(many.posts.statuses)}`)
    rows.push({
      measure: 'signed POST entry, 1 KiB (req/s)',
      embedded: embedded.posts.rps.toFixed(0),
      one: one.posts.rps.toFixed(0),
      oneBehind: oneBehind.posts.rps.toFixed(0),
      many: many.posts.rps.toFixed(0),
      statements_per_request: one.statements['signed POST entry']?.toFixed(2) ?? '',
      note: `${posted}/${many.posts.count} 201`,
    })
  }
  for (const w of many.writes) {
    const ok = w.statuses[String(w.expect)] ?? 0
    if (ok !== w.count) problems.push(`${w.name}: ${JSON.stringify(w.statuses)}`)
    const e = embedded.writes.find((x) => x.name === w.name)
    const o = one.writes.find((x) => x.name === w.name)
    const b = oneBehind.writes.find((x) => x.name === w.name)
    rows.push({
      measure: `${w.name} (req/s)`,
      embedded: e?.rps.toFixed(0) ?? '',
      one: o?.rps.toFixed(0) ?? '',
      oneBehind: b?.rps.toFixed(0) ?? '',
      many: w.rps.toFixed(0),
      statements_per_request: '',
      note: `${ok}/${w.count} ${w.expect}`,
    })
  }
  if (embedded.up && one.up && oneBehind.up && many.up)
    rows.push({
      measure: 'largest upload (ms)',
      embedded: embedded.up.ms.toFixed(0),
      one: one.up.ms.toFixed(0),
      oneBehind: oneBehind.up.ms.toFixed(0),
      many: many.up.ms.toFixed(0),
      statements_per_request: '',
      note: `status ${many.up.status}`,
    })
  rows.push({
    measure: 'start to first 200 (ms)',
    embedded: embedded.startMs.toFixed(0),
    one: one.startMs.toFixed(0),
    oneBehind: oneBehind.startMs.toFixed(0),
    many: many.startMs.toFixed(0),
    statements_per_request: '',
    note: 'the first instance',
  })
  return { instances: many.instances, rows, problems }
}

export function printInstances(c: ReturnType<typeof compareInstances>): string {
  const width = [52, 10, 10, 12, 12, 12, 12]
  const line = (cells: string[]) => cells.map((cell, i) => (i < width.length ? cell.padEnd(width[i]!) : cell)).join(' ')
  return [
    line(['measure', 'embedded', '1 on PG', '1 behind', `${c.instances} behind`, 'of ceiling', 'stmts/req', 'note']),
    ...c.rows.map((r) => line([r.measure, r.embedded, r.one, r.oneBehind, r.many, r.of_ceiling ?? '', r.statements_per_request, r.note])),
    '',
    c.problems.length
      ? `wrong answers behind the balancer: ${c.problems.join('; ')}`
      : 'every measure behind the balancer answered what it should, every time',
  ].join('\n')
}

/** The machines of the projection: N for instances, one for PostgreSQL, each of CORES cores; the balancer elsewhere. */
const CORES = 2

interface ResultsFile {
  postgres?: {
    reads: Array<{ name: string; pairs: Array<{ result: { requests: number; rps: number } }>; result: { rps: number } }>
    resources: {
      reads: Array<{ name: string; server_cpu_s: number; postgres_cpu_s: number | null }>
      phases: Array<{ phase: string; server: { cpu_s: number }; postgres: { cpu_s: number } | null }>
    }
    signed_posts: { count: number; rps: number } | null
    statements_per_request?: Record<string, number | null>
  }
  instances?: { count: number }
}

/**
 * On paper: N instances on N machines of CORES cores and PostgreSQL on one more, from what one instance's requests
 * cost in the same run (each process's CPU time over the requests it answered) and the statements each ran. A
 * route's throughput is the least of N × CORES over the instance's CPU per request and CORES over PostgreSQL's; the
 * balancer, the network and the disk are left out (named in the guide).
 */
export function projection(results: ResultsFile, machines = results.instances?.count ?? 3) {
  const pg = results.postgres
  if (!pg) throw new Error('the results hold no PostgreSQL run (run with --postgres)')
  const rows: Array<{
    measure: string
    measured_rps: number
    trellis_us: number
    postgres_us: number
    statements: number | null
    projected_rps: number
    bound: string
  }> = []
  const add = (measure: string, measured: number, requests: number, serverS: number, postgresS: number, statements: number | null) => {
    if (requests === 0) return
    const trellisUs = (serverS * 1e6) / requests
    const postgresUs = (postgresS * 1e6) / requests
    const byInstances = (machines * CORES * 1e6) / trellisUs
    const byPostgres = postgresUs > 0 ? (CORES * 1e6) / postgresUs : Number.POSITIVE_INFINITY
    rows.push({
      measure,
      measured_rps: measured,
      trellis_us: trellisUs,
      postgres_us: postgresUs,
      statements,
      projected_rps: Math.min(byInstances, byPostgres),
      bound: byInstances <= byPostgres ? 'instances' : 'PostgreSQL',
    })
  }
  for (const read of pg.reads) {
    const lap = pg.resources.reads.find((r) => r.name === read.name)
    if (!lap) continue
    add(
      read.name,
      read.result.rps,
      read.pairs.reduce((n, p) => n + p.result.requests, 0),
      lap.server_cpu_s,
      lap.postgres_cpu_s ?? 0,
      pg.statements_per_request?.[read.name] ?? null,
    )
  }
  const posting = pg.resources.phases.find((p) => p.phase === 'signed POST entry')
  if (posting && pg.signed_posts)
    add(
      'signed POST entry, 1 KiB',
      pg.signed_posts.rps,
      pg.signed_posts.count,
      posting.server.cpu_s,
      posting.postgres?.cpu_s ?? 0,
      pg.statements_per_request?.['signed POST entry'] ?? null,
    )
  return { machines, cores: CORES, rows }
}

if (import.meta.main) {
  // npx bun scripts/bench/instances.ts <results.json> [machines]: the projection of a run's figures.
  const [file, machines] = process.argv.slice(2)
  if (!file) {
    console.error('usage: npx bun scripts/bench/instances.ts <bench results.json> [machines]')
    process.exit(2)
  }
  const p = projection(JSON.parse(await Bun.file(file).text()) as ResultsFile, machines ? Number(machines) : undefined)
  console.log(`${p.machines} instances on ${p.machines} machines of ${p.cores} cores, PostgreSQL on one more of ${p.cores}:`)
  for (const r of p.rows) {
    console.log(
      `${r.measure.padEnd(50)} measured ${r.measured_rps.toFixed(0).padStart(6)} req/s  ` +
        `Trellis ${r.trellis_us.toFixed(0).padStart(5)} µs  ` +
        `PostgreSQL ${r.postgres_us.toFixed(0).padStart(5)} µs  ` +
        `stmts ${r.statements === null ? '  ?' : r.statements.toFixed(2)}  ` +
        `→ ${r.projected_rps.toFixed(0).padStart(7)} req/s (${r.bound})`,
    )
  }
}
