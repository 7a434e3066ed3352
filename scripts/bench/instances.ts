// Embedded, one instance on PostgreSQL, and N instances on it behind a balancer (nginx, or dev/balancer.ts): the same measures side by side,
// each as its ratio to bare Bun.serve in the same run, and the balancer's own ceiling (the bare server behind it), so
// what the extra hop costs is told apart from what the instances cost. On one machine's cores no gain is expected:
// the bar is that the ratios hold within the hop's cost and that nothing answers wrongly.
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
export async function balancerCeiling(baselineUrl: string, seconds: number, startBalancer: (port: number, targets: string[]) => Promise<Child>) {
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
export interface ScalingRow { measure: string; embedded: string; one: string; many: string; of_ceiling?: string; statements_per_request: string; note: string }

export function compareInstances(embedded: Run, one: Run, many: Run, ceiling: { ratio: number }) {
  const rows: ScalingRow[] = []
  const groups = { hot: [] as number[][], lists: [] as number[][] }
  const problems: string[] = []
  for (const m of many.reads) {
    const e = embedded.reads.find((r) => r.target.name === m.target.name)
    const o = one.reads.find((r) => r.target.name === m.target.name)
    if (!e || !o) continue
    const wrong = answerProblems(m)
    if (wrong.length) problems.push(`${m.target.name}: ${wrong.join(', ')}`)
    if (CACHED_HOT_READS.includes(m.target.group)) groups.hot.push([e.ratio, o.ratio, m.ratio])
    if (LIST_PAGES.includes(m.target.group)) groups.lists.push([e.ratio, o.ratio, m.ratio])
    const statements = one.statements[m.target.name]
    rows.push({
      measure: m.target.name, embedded: e.ratio.toFixed(2), one: o.ratio.toFixed(2), many: m.ratio.toFixed(2), of_ceiling: (m.ratio / ceiling.ratio).toFixed(2),
      statements_per_request: statements === null || statements === undefined ? '' : statements.toFixed(2), note: wrong.join('; '),
    })
  }
  const group = (label: string, members: number[][]) => members.length && rows.unshift({
    measure: `${label} (${members.length} routes, geomean)`, embedded: geomean(members.map((r) => r[0]!)).toFixed(2), one: geomean(members.map((r) => r[1]!)).toFixed(2),
    many: geomean(members.map((r) => r[2]!)).toFixed(2), of_ceiling: (geomean(members.map((r) => r[2]!)) / ceiling.ratio).toFixed(2), statements_per_request: '', note: '',
  })
  group('list pages', groups.lists)
  group('cached hot reads', groups.hot)
  rows.unshift({ measure: 'the balancer\'s ceiling (bare server behind it)', embedded: '', one: '', many: ceiling.ratio.toFixed(2), statements_per_request: '', note: 'the most any route can reach through the hop' })
  if (embedded.posts && one.posts && many.posts) {
    const posted = many.posts.statuses['201'] ?? 0
    if (posted !== many.posts.count) problems.push(`signed POST: ${JSON.stringify(many.posts.statuses)}`)
    rows.push({
      measure: 'signed POST entry, 1 KiB (req/s)', embedded: embedded.posts.rps.toFixed(0), one: one.posts.rps.toFixed(0), many: many.posts.rps.toFixed(0),
      statements_per_request: one.statements['signed POST entry']?.toFixed(2) ?? '', note: `${posted}/${many.posts.count} 201`,
    })
  }
  for (const w of many.writes) {
    const ok = w.statuses[String(w.expect)] ?? 0
    if (ok !== w.count) problems.push(`${w.name}: ${JSON.stringify(w.statuses)}`)
    const e = embedded.writes.find((x) => x.name === w.name)
    const o = one.writes.find((x) => x.name === w.name)
    rows.push({ measure: `${w.name} (req/s)`, embedded: e?.rps.toFixed(0) ?? '', one: o?.rps.toFixed(0) ?? '', many: w.rps.toFixed(0), statements_per_request: '', note: `${ok}/${w.count} ${w.expect}` })
  }
  if (embedded.up && one.up && many.up) rows.push({ measure: 'largest upload (ms)', embedded: embedded.up.ms.toFixed(0), one: one.up.ms.toFixed(0), many: many.up.ms.toFixed(0), statements_per_request: '', note: `status ${many.up.status}` })
  rows.push({ measure: 'start to first 200 (ms)', embedded: embedded.startMs.toFixed(0), one: one.startMs.toFixed(0), many: many.startMs.toFixed(0), statements_per_request: '', note: 'the first instance' })
  return { instances: many.instances, rows, problems }
}

export function printInstances(c: ReturnType<typeof compareInstances>): string {
  const width = [52, 10, 10, 12, 12, 12]
  const line = (cells: string[]) => cells.map((cell, i) => (i < width.length ? cell.padEnd(width[i]!) : cell)).join(' ')
  return [
    line(['measure', 'embedded', '1 on PG', `${c.instances} on PG`, 'of ceiling', 'stmts/req', 'note']),
    ...c.rows.map((r) => line([r.measure, r.embedded, r.one, r.many, r.of_ceiling ?? '', r.statements_per_request, r.note])),
    '',
    c.problems.length ? `wrong answers behind the balancer: ${c.problems.join('; ')}` : 'every measure behind the balancer answered what it should, every time',
  ].join('\n')
}
