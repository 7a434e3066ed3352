// What every request passes through around routing: the rate limit (before routing, so floods of bad requests are
// limited too), CORS, request metrics and the request log. Plain functions rather than Elysia hooks: a global hook
// cost about 3 µs per request, a third of a cached read.
import type { Server } from 'bun'
import type { Logger } from '../log.ts'
import type { RequestMetrics } from './metrics.ts'
import type { rateLimiter } from './rate-limit.ts'

// CORS for an open API: every origin may read every answer; no cookies are used, so no credentials.
const EXPOSED = ['X-PAYMENT-RESPONSE', 'PAYMENT-RESPONSE', 'PAYMENT-REQUIRED', 'ETag', 'Content-Range', 'Accept-Ranges', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].join(', ')
const METHODS = 'GET, HEAD, POST, PATCH, DELETE, OPTIONS'
const PREFLIGHT_MAX_AGE_S = '600'

/** The requesting origin rather than "*" when there is one, and always Vary: Origin, so caches keep answers apart. */
function allowOrigin(headers: Headers, origin: string | null): void {
  headers.set('access-control-allow-origin', origin ?? '*')
  headers.set('vary', 'Origin')
  headers.set('access-control-expose-headers', EXPOSED)
}

/**
 * The headers of a JSON answer with its CORS headers, one Headers object per origin: Bun copies a Headers object
 * into a Response in half the time it takes to build one from a literal or to set headers one by one.
 */
function jsonHeaders() {
  const byOrigin = new Map<string, Headers>()
  return (origin: string | null): Headers => {
    const key = origin ?? '*'
    let headers = byOrigin.get(key)
    if (!headers) {
      headers = new Headers({ 'content-type': 'application/json', 'access-control-allow-origin': key, vary: 'Origin', 'access-control-expose-headers': EXPOSED })
      if (byOrigin.size >= 256) byOrigin.clear() // browsers send a few origins; anyone can send many
      byOrigin.set(key, headers)
    }
    return headers
  }
}

function preflight(request: Request, origin: string | null): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': origin ?? '*',
      vary: 'Origin',
      'access-control-allow-methods': METHODS,
      'access-control-allow-headers': request.headers.get('access-control-request-headers') ?? '',
      'access-control-max-age': PREFLIGHT_MAX_AGE_S,
    },
  })
}

/** The path of an absolute request URL, without parsing all of it. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/** The socket's peer, or behind a trusted reverse proxy the address that proxy appended to X-Forwarded-For. */
function clientAddress(request: Request, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const hops = request.headers.get('x-forwarded-for')?.split(',').map((h) => h.trim()).filter(Boolean)
    if (hops?.length) return hops[hops.length - 1]
  }
  return peer ?? 'unknown'
}

/** A route's answer: a response, or the text of a 200 JSON answer (the edge adds all its headers at once). */
export type Answer = Response | string

export function httpEdge(d: { limiter: ReturnType<typeof rateLimiter> | null; requests: RequestMetrics; log: Logger; trustProxy: boolean }) {
  const logRequests = d.log.enabled('info')
  const headersFor = jsonHeaders()
  return (request: Request, server: Server<unknown>, route: () => Answer | Promise<Answer>): Response | Promise<Response> => {
    const started = performance.now()
    const origin = request.headers.get('origin')
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) return preflight(request, origin)
    const path = d.limiter || logRequests ? pathOf(request.url) : ''
    const limit = d.limiter?.check(request.method, path, clientAddress(request, server.requestIP(request)?.address, d.trustProxy))
    const finish = (answer: Answer): Response => {
      const response = typeof answer === 'string' ? new Response(answer, { headers: headersFor(origin) }) : answer
      if (typeof answer !== 'string') allowOrigin(response.headers, origin)
      if (limit) for (const [k, v] of Object.entries(limit.headers)) response.headers.set(k, v)
      d.requests.observe(request.method, response.status, (performance.now() - started) / 1000)
      // Access tokens are credentials: keep them out of logs.
      if (logRequests) d.log.info('request', { method: request.method, path: path.startsWith('/v1/access/') ? '/v1/access/<token>' : path, status: response.status, ms: Math.round((performance.now() - started) * 10) / 10 })
      return response
    }
    if (limit?.rejected) return finish(limit.rejected)
    const response = route()
    return response instanceof Promise ? response.then(finish) : finish(response)
  }
}
