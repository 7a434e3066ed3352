// The verdict: every figure against its target, as a printed table and as rows for the JSON file.
import type { ReadGroup, ReadResult } from './measure-reads.ts'

export interface Row { measure: string; value: string; ratio: string; target: string; pass: boolean; note?: string }

const MB = 1024 * 1024
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MiB`
const ms = (v: number | null | undefined) => (v === null || v === undefined ? '?' : v < 10 ? v.toFixed(2) : v.toFixed(0))

/**
 * Ratio to the bare baseline, or to the same bytes served bare (`toSameBody`, for answers whose size is what sets
 * the pace), or a floor in req/s; for some groups a p99 ceiling (ms). 'other' has no target yet: it passes when it
 * answers what it should, every time, and its figures are recorded.
 */
const READ_TARGETS: Record<ReadGroup, { ratio?: number; toSameBody?: number; rps?: number; p99?: number }> = {
  feed: { ratio: 0.6 },
  board: { ratio: 0.7, p99: 5 },
  challenge: { ratio: 0.5 },
  list: { ratio: 0.3, p99: 10 },
  search: { ratio: 0.2 },
  recent: { toSameBody: 0.7 },
  image: { toSameBody: 0.6 },
  write: { rps: 1000 },
  other: {},
}

function targetText(goal: (typeof READ_TARGETS)[ReadGroup]): string {
  const parts = [
    goal.ratio !== undefined ? `≥ ${goal.ratio.toFixed(2)}` : '',
    goal.toSameBody !== undefined ? `≥ ${goal.toSameBody.toFixed(2)} of body bare` : '',
    goal.rps !== undefined ? `≥ ${goal.rps} req/s` : '',
    goal.p99 !== undefined ? `p99 ≤ ${goal.p99} ms` : '',
  ].filter(Boolean)
  return parts.length ? parts.join(', ') : 'status only'
}

export function readRow(r: ReadResult): Row {
  const goal = READ_TARGETS[r.target.group]
  const runs = r.pairs.map((p) => p.result)
  const errors = runs.reduce((sum, run) => sum + Object.values(run.socket_errors).reduce((a, b) => a + b, 0), 0)
  const non2xx = runs.reduce((sum, run) => sum + run.non_2xx, 0)
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  const p99 = Math.max(...runs.map((run) => run.p99_ms ?? Infinity)) // the worst of the runs
  // A fast wrong answer is no pass: the route must answer what it should, every time.
  const wrongStatus = r.probe.status !== r.target.expect || (r.target.expect < 400 ? non2xx > 0 : non2xx < requests) // wrk counts only statuses ≥ 400 as non-2xx
  const pass = !wrongStatus && errors === 0 && (goal.ratio === undefined || r.ratio >= goal.ratio) && (goal.toSameBody === undefined || r.ratioToSameBody >= goal.toSameBody) &&
    (goal.rps === undefined || r.result.rps >= goal.rps) && (goal.p99 === undefined || p99 <= goal.p99)
  const notes = [wrongStatus ? `status ${r.probe.status}${non2xx && r.target.expect === 200 ? `, ${non2xx} non-2xx` : ''}` : '', errors ? `${errors} socket errors` : ''].filter(Boolean)
  return {
    measure: r.target.name,
    value: `${r.result.rps >= 1000 ? `${(r.result.rps / 1000).toFixed(1)}k` : r.result.rps.toFixed(0)} req/s, p99 ${ms(p99)} ms, ${Number.isFinite(r.ratioToSameBody) ? r.ratioToSameBody.toFixed(2) : 'n/a'} of body bare`,
    ratio: r.ratio.toFixed(2),
    target: `${targetText(goal)}${r.target.expect !== 200 ? `, ${r.target.expect}` : ''}`,
    pass,
    ...(notes.length ? { note: notes.join('; ') } : {}),
  }
}

/** A write measured by signed-load.ts: every answer its success status, at the signed POST entry's floor. */
export function writeRow(w: { name: string; expect: number; count: number; rps: number; statuses: Record<string, number> }): Row {
  const ok = w.statuses[String(w.expect)] ?? 0
  return {
    measure: w.name, value: `${w.rps.toFixed(0)} req/s (${ok}/${w.count} ${w.expect})`, ratio: '', target: '≥ 1000 req/s',
    pass: w.rps >= 1000 && ok === w.count, ...(ok !== w.count ? { note: `statuses ${JSON.stringify(w.statuses)}` } : {}),
  }
}

export function otherRows(f: {
  startMs: number
  rssAfterWarmUp: number
  refresh: null | { p99_ms: number | null; max_ms: number | null; non_2xx: number; rebuilds_finished_in_window: number }
  posts: null | { rps: number; count: number; statuses: Record<string, number> }
  upload: null | { payload_bytes: number; requested_payload_bytes: number; ms: number; floor_ms: number; ratio_to_floor: number; rss_growth: number; rss_peak: number; status: number | string }
  downloads: null | { parallel: number; entry_bytes: number; complete: number; rss_growth: number; rss_peak: number }
}): Row[] {
  const rows: Row[] = []
  const r = f.refresh
  if (r) {
    rows.push({
      measure: 'read p99 during stats refresh (2 s period)', value: `p99 ${ms(r.p99_ms)} max ${ms(r.max_ms)} ms, ${r.rebuilds_finished_in_window} rebuilds`,
      ratio: '', target: 'p99 ≤ 20 ms', pass: (r.p99_ms ?? Infinity) <= 20 && r.non_2xx === 0 && r.rebuilds_finished_in_window > 0,
      ...(r.rebuilds_finished_in_window === 0 ? { note: 'no rebuild finished inside the window: not a measurement of a refresh' } : {}),
    })
  }
  rows.push(
    { measure: 'start to first 200 (top-revenue)', value: `${f.startMs.toFixed(0)} ms`, ratio: '', target: '≤ 300 ms', pass: f.startMs <= 300 },
    { measure: 'RSS after warm-up', value: mb(f.rssAfterWarmUp), ratio: '', target: '≤ 300 MiB', pass: f.rssAfterWarmUp <= 300 * MB },
  )
  if (f.posts) {
    const posted = f.posts.statuses['201'] ?? 0
    rows.push({
      measure: 'signed POST entry, 1 KiB (50 workers)', value: `${f.posts.rps.toFixed(0)} req/s (${posted}/${f.posts.count} 201)`, ratio: '', target: '≥ 1000 req/s',
      pass: f.posts.rps >= 1000 && posted === f.posts.count,
    })
  }
  const u = f.upload
  if (u) {
    rows.push(
      {
        measure: `upload ${mb(u.payload_bytes)} entry${u.payload_bytes < u.requested_payload_bytes ? ' (50 MiB > limit)' : ''}`, value: `median ${u.ms.toFixed(0)} ms (floor ${u.floor_ms.toFixed(0)} ms)`,
        ratio: `${u.ratio_to_floor.toFixed(2)}×fl`, target: '≤ 3× floor', pass: u.status === 201 && u.ratio_to_floor <= 3,
        ...(u.status !== 201 ? { note: `status ${u.status}` } : {}),
      },
      {
        measure: 'upload: server RSS growth', value: `+${mb(u.rss_growth)} (peak ${mb(u.rss_peak)})`, ratio: `${(u.rss_growth / u.payload_bytes).toFixed(2)}×pl`,
        target: '≤ 2× payload', pass: u.rss_growth <= 2 * u.payload_bytes,
      },
    )
  }
  const d = f.downloads
  if (d) {
    rows.push({
      measure: `${d.parallel}× ${mb(d.entry_bytes)} downloads: RSS growth`, value: `+${mb(d.rss_growth)} (peak ${mb(d.rss_peak)}, ${d.complete}/${d.parallel} ok)`, ratio: '',
      target: '≤ 256 MiB', pass: d.rss_growth <= 256 * MB && d.complete === d.parallel,
    })
  }
  return rows
}

export function printTable(rows: Row[], baselineRps: number): string {
  const width = [46, 40, 8, 24]
  const line = (cells: string[]) => cells.map((c, i) => (i < width.length ? c.padEnd(width[i]!) : c)).join(' ')
  const out = [
    line(['measure', 'value', 'ratio', 'target', 'result']),
    line(['-'.repeat(46), '-'.repeat(40), '-'.repeat(8), '-'.repeat(24), '------']),
    ...rows.map((r) => line([r.measure, r.value, r.ratio, r.target, r.pass ? 'PASS' : `FAIL${r.note ? ` (${r.note})` : ''}`])),
    `${Number.isFinite(baselineRps) ? `bare Bun.serve baseline: ${baselineRps.toFixed(0)} req/s (mean of the runs); ` : ''}${rows.filter((r) => r.pass).length}/${rows.length} targets met`,
  ]
  return out.join('\n')
}
