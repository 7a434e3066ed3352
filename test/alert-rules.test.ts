// The watching kit (docs/operations.md#watching) against the real server: promtool (Debian's `prometheus` package)
// checks the alert rules and runs their unit tests; the Grafana dashboard is JSON whose every query parses as PromQL;
// and every metric name a rule or a panel queries is one a real server's /metrics shows, so a renamed series cannot
// leave a panel empty or an alert silent. Names that come with a later item are listed below, each with why.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'

const ROOT = join(import.meta.dir, '..')
const RULES = 'docs/prometheus/trellis-alerts.yml'
const RULE_TESTS = 'docs/prometheus/trellis-alerts.test.yml'
const DASHBOARD = 'docs/grafana/trellis.json'

/**
 * Queried by a rule or a panel, not exposed by this test's server (embedded, no replicas): why each is there, and
 * which test sees it exposed.
 */
const LATER: Record<string, string> = {
  trellis_replica_lag_seconds: 'only with read replicas (TRELLIS_DATABASE_REPLICA_URL): test/replicas.test.ts reads it',
  trellis_replica_in_use: 'only with read replicas (TRELLIS_DATABASE_REPLICA_URL): test/replicas.test.ts reads it',
  trellis_change_feed_heard: 'only on PostgreSQL (instances sharing a database): test/change-feed-watch.test.ts reads it',
}

const scratch: string[] = []
let server: TestServer
let exposed: Set<string>
let exposition: string

/** Sample names of an exposition (histograms' _bucket, _sum and _count as they are queried). */
const sampleNames = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]),
  )

beforeAll(async () => {
  server = await startTestServer()
  scratch.push(server.dataDir)
  await fetch(`${server.url}/health`) // a request, so the latency histogram has samples
  // A backup the server runs over its control socket: the operation series appear only once one has run.
  const backups = tempDir('trellis-watch-backup-')
  scratch.push(backups)
  expect((await trellis(['backup', join(backups, 'backup')], server.dataDir)).code).toBe(0)
  // The ledger series appear after the leader's first check, which runs at start beside the first requests.
  for (let tries = 0; ; tries++) {
    exposition = await (await fetch(`${server.url}/metrics`)).text()
    exposed = sampleNames(exposition)
    if (exposed.has('trellis_ledger_problems') || tries === 100) break
    await Bun.sleep(100)
  }
}, 60_000)
afterAll(async () => {
  await server?.dispose()
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

function promtool(...args: string[]): { code: number; output: string } {
  if (!Bun.which('promtool')) throw new Error("promtool not found: install Debian's prometheus (npm test's pretest does)")
  const run = Bun.spawnSync(['promtool', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  return { code: run.exitCode, output: run.stdout.toString() + run.stderr.toString() }
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan'])

/**
 * The metric names of a PromQL expression: identifiers left once strings, label matchers, ranges and label lists
 * (by, on, ...) are taken out, less function names (an identifier followed by a parenthesis) and keywords.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
  return [...bare.matchAll(/(?<![\w.$])[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter((m) => !/^\s*\(/.test(bare.slice(m.index + m[0].length)) && !KEYWORDS.has(m[0].toLowerCase()))
    .map((m) => m[0])
}

type Rule = { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const rules = (): Rule[] =>
  (Bun.YAML.parse(readFileSync(join(ROOT, RULES), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules)

interface Panel {
  title?: string
  targets?: { expr?: string }[]
  panels?: Panel[]
}
const dashboard = () =>
  JSON.parse(readFileSync(join(ROOT, DASHBOARD), 'utf8')) as {
    panels: Panel[]
    schemaVersion: number
    templating: { list: { name: string; type: string; query?: string | { query: string } }[] }
  }
const panelQueries = (panels: Panel[]): { title: string; expr: string }[] =>
  panels.flatMap((panel) => [
    ...(panel.targets ?? []).flatMap((target) => (target.expr ? [{ title: panel.title ?? '', expr: target.expr }] : [])),
    ...panelQueries(panel.panels ?? []),
  ])

test('metricNames finds the series of an expression, not its functions, labels or keywords', () => {
  const expr =
    'sum by (job) (rate(a_total{status=~"5..",x="b_total"}[5m])) / on (job) group_left (route) b_bucket > 0.05 and ' +
    'time() - max(c_seconds{job=~"$job"}) > 26 * 3600 or absent(d) unless histogram_quantile(0.5, e[$__rate_interval])'
  expect(metricNames(expr)).toEqual(['a_total', 'b_bucket', 'c_seconds', 'd', 'e'])
})

test('a lone server leads (trellis_leader 1), so TrellisLeaderMissing stays quiet for it', () => {
  expect(exposition).toMatch(/^trellis_leader 1$/m)
})

test('promtool checks the alert rules, and their unit tests pass', () => {
  const checked = promtool('check', 'rules', RULES)
  expect(checked.output).toContain('SUCCESS')
  expect(checked.code).toBe(0)
  const tested = promtool('test', 'rules', RULE_TESTS)
  expect(tested.output).toContain('SUCCESS')
  expect(tested.code).toBe(0)
})

test('the issue\'s alerts are all there, each with a severity, a "for" and what to do', () => {
  const all = rules()
  const names = all.map((rule) => rule.alert)
  for (const name of [
    'TrellisLedgerMismatch',
    'TrellisLedgerUnreadable',
    'TrellisBackupLate',
    'TrellisWebhooksFailing',
    'TrellisReplicaLag',
    'TrellisHigh5xxRate',
    'TrellisLeaderMissing',
    'TrellisLeaderSplit',
    'TrellisChangeFeedDeaf',
  ])
    expect(names).toContain(name)
  const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
  for (const rule of all) {
    expect(['critical', 'warning']).toContain(rule.labels?.severity ?? '')
    expect(rule.for).toMatch(/^\d+[smh]$/)
    expect(rule.annotations?.summary).toBeTruthy()
    expect(rule.annotations?.description).toContain('docs/operations.md#watching')
    expect(operations).toContain(rule.alert) // the Watching section says what it means and what to do
  }
})

test('every series a rule queries is one /metrics shows (or one listed as coming later)', () => {
  const missing = rules().flatMap((rule) =>
    metricNames(rule.expr).flatMap((name) => (exposed.has(name) || name in LATER ? [] : [`${rule.alert}: ${name}`])),
  )
  expect(missing).toEqual([])
})

test('the dashboard is Grafana JSON whose every panel query parses and names series /metrics shows', () => {
  const board = dashboard()
  expect(board.schemaVersion).toBeGreaterThanOrEqual(36) // Grafana 9.x and later; 39 is what 10.4 and 11 write
  expect(board.templating.list.map((v) => v.name)).toEqual(expect.arrayContaining(['datasource', 'instance']))
  const queries = panelQueries(board.panels)
  expect(queries.length).toBeGreaterThan(30)
  const names = new Set(queries.flatMap((q) => metricNames(q.expr)))
  for (const variable of board.templating.list) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query
    const series = query && /^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(query)
    if (series) names.add(series[1]!)
  }
  expect(names.size).toBeGreaterThan(20)
  expect([...names].filter((name) => !exposed.has(name) && !(name in LATER))).toEqual([])

  // promtool parses PromQL offline when it checks recording rules: each query becomes one, its variables filled in.
  const parsed = tempDir('trellis-watch-panels-')
  scratch.push(parsed)
  const fill = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*').replaceAll('$instance', '.*')
  const recorded = queries.map((q, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(fill(q.expr))}`)
  writeFileSync(join(parsed, 'panels.yml'), `groups:\n  - name: dashboard\n    rules:\n${recorded.join('\n')}\n`)
  const checked = promtool('check', 'rules', join(parsed, 'panels.yml'))
  expect(checked.output).toContain(`SUCCESS: ${queries.length} rules found`)
  expect(checked.code).toBe(0)
})
