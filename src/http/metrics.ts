// GET /metrics: Prometheus text exposition of request counters and a few gauges of the market.
import { Elysia } from 'elysia'

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** Counted on every request, so counting allocates nothing: a counter per known method and status code. */
export function requestMetrics() {
  // Any other method is counted as OTHER: anyone can send any token there, and each would otherwise add a series.
  const counts = new Map<string, Float64Array>([...METHODS, 'OTHER'].map((m) => [m, new Float64Array(600)]))
  const other = counts.get('OTHER')!
  const inBucket = new Float64Array(BUCKETS.length) // not cumulative: summed when rendered
  let sum = 0
  let total = 0
  return {
    observe(method: string, status: number, seconds: number) {
      ;(counts.get(method) ?? other)[status]++
      sum += seconds
      total++
      for (let i = 0; i < BUCKETS.length; i++) {
        if (seconds <= BUCKETS[i]) {
          inBucket[i]++
          break
        }
      }
    },
    render(): string {
      const lines = ['# HELP trellis_http_requests_total HTTP requests by method and status.', '# TYPE trellis_http_requests_total counter']
      for (const [method, byStatus] of counts) {
        byStatus.forEach((n, status) => {
          if (n > 0) lines.push(`trellis_http_requests_total{method="${method}",status="${status}"} ${n}`)
        })
      }
      lines.push('# HELP trellis_http_request_duration_seconds Time to answer a request.', '# TYPE trellis_http_request_duration_seconds histogram')
      let cumulative = 0
      BUCKETS.forEach((le, i) => lines.push(`trellis_http_request_duration_seconds_bucket{le="${le}"} ${(cumulative += inBucket[i])}`))
      lines.push(`trellis_http_request_duration_seconds_bucket{le="+Inf"} ${total}`, `trellis_http_request_duration_seconds_sum ${sum}`, `trellis_http_request_duration_seconds_count ${total}`)
      return lines.join('\n')
    },
  }
}
export type RequestMetrics = ReturnType<typeof requestMetrics>

/** `gauges`: the market's current figures, by name (see store/gauges.ts). */
export const metricsRoutes = (gauges: () => Record<string, number>, requests: RequestMetrics, startedAt: number, more: () => string[] = () => []) => {
  return new Elysia({ tags: ['Operations'] }).get('/metrics', () => {
    const g = gauges()
    const lines = [requests.render()]
    for (const [name, value] of Object.entries(g)) lines.push(`# TYPE trellis_${name} gauge`, `trellis_${name} ${value}`)
    lines.push('# TYPE trellis_uptime_seconds gauge', `trellis_uptime_seconds ${Math.floor(Date.now() / 1000) - startedAt}`, ...more())
    return new Response(lines.join('\n') + '\n', { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } })
  }, { detail: { summary: 'Prometheus metrics' } })
}
