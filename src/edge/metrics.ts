// GET /metrics: Prometheus text exposition: requests by route template, method and status with their durations,
// the process (CPU, memory, file descriptors), the build, and what the caller adds (gauges of the market, payments
// by outcome, jobs).
import { Elysia } from 'elysia'
import { readdirSync, readFileSync } from 'node:fs'
import { createHash, timingSafeEqual } from 'node:crypto'
import { DomainError } from '../domain/errors.ts'
import type { Gauge } from '../domain/market-size.ts'

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
/** The route label of requests no route template matched (unknown paths, and paths Bun's router does not decode). */
export const UNROUTED = 'other'

interface Series {
  method: string
  route: string
  byStatus: Float64Array
  inBucket: Float64Array
  sum: number
  total: number
}

/**
 * Counted on every request, so counting allocates nothing: each route template and method has its series, made
 * when the routes are registered (the request wrapper keeps its index); requests no template matched share one per method.
 */
export function requestMetrics() {
  const series: Series[] = []
  const unrouted = new Map<string, number>()
  const add = (method: string, route: string) =>
    series.push({ method, route, byStatus: new Float64Array(600), inBucket: new Float64Array(BUCKETS.length), sum: 0, total: 0 }) - 1
  return {
    /** The series of a route template and method (call once per route, when registering it). */
    series: add,
    /** The series of an unmatched request. Any unknown method counts as OTHER: anyone can send any token there. */
    unrouted(method: string): number {
      const known = METHODS.has(method) ? method : 'OTHER'
      return unrouted.get(known) ?? unrouted.set(known, add(known, UNROUTED)).get(known)!
    },
    observe(index: number, status: number, seconds: number) {
      const s = series[index]!
      s.byStatus[status < 600 ? status : 599]++
      s.sum += seconds
      s.total++
      for (let i = 0; i < BUCKETS.length; i++) {
        if (seconds <= BUCKETS[i]!) {
          s.inBucket[i]!++
          break
        }
      }
    },
    render(): string {
      const lines = [
        '# HELP trellis_http_requests_total HTTP requests by route template, method and status.',
        '# TYPE trellis_http_requests_total counter',
      ]
      for (const s of series) {
        s.byStatus.forEach((n, status) => {
          if (n > 0) lines.push(`trellis_http_requests_total{method="${s.method}",route="${s.route}",status="${status}"} ${n}`)
        })
      }
      lines.push(
        '# HELP trellis_http_request_duration_seconds Time to answer a request, by route template and method.',
        '# TYPE trellis_http_request_duration_seconds histogram',
      )
      for (const s of series) {
        if (s.total === 0) continue
        const labels = `method="${s.method}",route="${s.route}"`
        let cumulative = 0
        BUCKETS.forEach((le, i) => {
          lines.push(`trellis_http_request_duration_seconds_bucket{${labels},le="${le}"} ${(cumulative += s.inBucket[i]!)}`)
        })
        lines.push(
          `trellis_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.total}`,
          `trellis_http_request_duration_seconds_sum{${labels}} ${s.sum}`,
          `trellis_http_request_duration_seconds_count{${labels}} ${s.total}`,
        )
      }
      return lines.join('\n')
    },
  }
}
export type RequestMetrics = ReturnType<typeof requestMetrics>

const PAGE_SIZE = 4096

/** The standard process_* series (Prometheus client conventions). */
function processMetrics(startedAt: number): string[] {
  const cpu = process.cpuUsage()
  const lines = [
    '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
    '# TYPE process_cpu_seconds_total counter',
    `process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`,
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
    '# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.',
    '# TYPE process_start_time_seconds gauge',
    `process_start_time_seconds ${startedAt}`,
  ]
  if (process.platform === 'linux') {
    try {
      const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[0])
      lines.push(
        '# HELP process_virtual_memory_bytes Virtual memory size in bytes.',
        '# TYPE process_virtual_memory_bytes gauge',
        `process_virtual_memory_bytes ${pages * PAGE_SIZE}`,
      )
      lines.push(
        '# HELP process_open_fds Number of open file descriptors.',
        '# TYPE process_open_fds gauge',
        `process_open_fds ${readdirSync('/proc/self/fd').length}`,
      )
      const limit = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))
      if (limit)
        lines.push(
          '# HELP process_max_fds Maximum number of open file descriptors.',
          '# TYPE process_max_fds gauge',
          `process_max_fds ${limit[1]}`,
        )
    } catch {
      // /proc unreadable: the portable series above still stand
    }
  }
  return lines
}

/**
 * Where the memory goes: the JavaScript heap, and the two bounded caches that fill as a market is read (small
 * items' bytes; read results until the next write), so a resident size that grows can be told from one that fills.
 */
export function memoryMetrics(caches: { content: () => number; reads: () => number }): string[] {
  const { heapUsed, heapTotal } = process.memoryUsage()
  return [
    '# HELP trellis_js_heap_bytes JavaScript heap, by kind (used: live objects and garbage not yet collected; total: reserved).',
    '# TYPE trellis_js_heap_bytes gauge',
    `trellis_js_heap_bytes{kind="used"} ${heapUsed}`,
    `trellis_js_heap_bytes{kind="total"} ${heapTotal}`,
    '# HELP trellis_cache_bytes Bytes held by a bounded in-memory cache (content: small items; ' +
      'reads: read results, counted in characters).',
    '# TYPE trellis_cache_bytes gauge',
    `trellis_cache_bytes{cache="content"} ${caches.content()}`,
    `trellis_cache_bytes{cache="reads"} ${caches.reads()}`,
  ]
}

/** Payment attempts answered since start, by outcome: paid (200), refused (402), unavailable (502), pending (503). */
export function paymentMetrics(outcomes: Readonly<Record<string, number>>): string[] {
  return [
    '# HELP trellis_payments_total Payments answered, by outcome.',
    '# TYPE trellis_payments_total counter',
    ...Object.entries(outcomes).map(([outcome, n]) => `trellis_payments_total{outcome="${outcome}"} ${n}`),
  ]
}

/** Each read replica: how far behind the primary it is at most, and whether reads go to it (0: the primary serves them). */
export function replicaMetrics(replicas: ReadonlyArray<{ replica: string; inUse: boolean; lagS: number }>): string[] {
  if (replicas.length === 0) return []
  const label = (name: string) => `replica="${name.replace(/["\\\n]/g, '_')}"`
  return [
    '# HELP trellis_replica_lag_seconds How far a read replica is behind the primary at most (0: it replayed all of it).',
    '# TYPE trellis_replica_lag_seconds gauge',
    ...replicas.map((r) => `trellis_replica_lag_seconds{${label(r.replica)}} ${Math.round(r.lagS * 1000) / 1000}`),
    '# HELP trellis_replica_in_use Whether a read replica serves reads (1), or is behind the bound or out of reach (0).',
    '# TYPE trellis_replica_in_use gauge',
    ...replicas.map((r) => `trellis_replica_in_use{${label(r.replica)}} ${r.inUse ? 1 : 0}`),
  ]
}

/** What /metrics shows besides requests and the process: the market's gauges, the build, and more series. */
export interface MetricsSources {
  gauges: () => Promise<Gauge[]>
  build: { version: string; network: string }
  more: () => string[]
  /** When set, /metrics answers only requests whose admin-api-key header holds it (TRELLIS_METRICS_AUTH=admin). */
  adminKey?: string | null
}

const digest = (value: string) => createHash('sha256').update(value).digest()

export const metricsRoutes = (requests: RequestMetrics, startedAt: number, sources: MetricsSources) => {
  const expected = sources.adminKey ? digest(sources.adminKey) : null
  return new Elysia({ tags: ['Operations'] }).get(
    '/metrics',
    async ({ request }) => {
      if (expected) {
        const given = request.headers.get('admin-api-key')
        if (!given || !timingSafeEqual(digest(given), expected))
          throw new DomainError('ADMIN_KEY_REQUIRED', 'a valid admin-api-key header is required')
      }
      const lines = [requests.render(), ...processMetrics(startedAt)]
      lines.push(
        '# HELP trellis_build_info The running build.',
        '# TYPE trellis_build_info gauge',
        `trellis_build_info{version="${sources.build.version}",bun="${Bun.version}",network="${sources.build.network}"} 1`,
      )
      for (const { name, help, value } of await sources.gauges())
        lines.push(`# HELP trellis_${name} ${help}`, `# TYPE trellis_${name} gauge`, `trellis_${name} ${value}`)
      lines.push(
        '# HELP trellis_uptime_seconds Seconds since the server started.',
        '# TYPE trellis_uptime_seconds gauge',
        `trellis_uptime_seconds ${Math.floor(Date.now() / 1000) - startedAt}`,
        ...sources.more(),
      )
      return new Response(lines.join('\n') + '\n', { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } })
    },
    {
      detail: {
        summary: 'Prometheus metrics',
        description:
          'Requests by route template, method and status; process_*; trellis_build_info; market gauges; ' +
          'payments by outcome; job runs and durations; whether this instance leads; webhook attempts by result; the ledger ' +
          'check; operations (backups); the lag and use of read replicas. With TRELLIS_METRICS_AUTH=admin, only with the ' +
          'admin-api-key header (else 401 ADMIN_KEY_REQUIRED).',
      },
    },
  )
}
