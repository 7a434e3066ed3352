// The wrapper every request passes through around routing: the rate limit (before routing, so floods of bad requests
// are limited too), CORS, the request id, request metrics and the request log. Plain functions rather than Elysia
// hooks (see serve.ts for the measurement).
import type { Server } from 'bun'
import { randomUUID } from 'node:crypto'
import { requestContext, type Logger } from '../log.ts'
import type { RequestMetrics } from './metrics.ts'
import type { Limit, RateLimiter } from './rate-limit.ts'
import { errorResponse } from './errors.ts'
import { ANSWER_HEADERS } from '../chain/x402/resource-server.ts'
import { WARNING_HEADER } from '../domain/cheap-prices.ts'
import { tracer, type Attributes, type Tracer } from '../lib/traces.ts'
import { VERSION_HEADER, type ReadYourWrites } from './read-your-writes.ts'

// CORS for an open API: every origin may read every answer, without credentials (the browser session's cookie is
// SameSite=Lax, and "*" lets no other origin read an answer made with it).
const EXPOSED = [
  ...ANSWER_HEADERS,
  'X-Request-Id',
  'ETag',
  'Content-Range',
  'Accept-Ranges',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  WARNING_HEADER,
  VERSION_HEADER,
].join(', ')
const METHODS = 'GET, HEAD, POST, PATCH, DELETE, OPTIONS'
const PREFLIGHT_MAX_AGE_S = '600'

/**
 * Every answer allows every origin with "*", the same for all callers: no credentials are allowed across origins, so
 * a browser needs nothing more, and CORS never makes the wrapper read the request's headers (building them costs a tenth
 * of a cached read; only X-Request-Id does, and only while requests are logged).
 */
const CORS: Record<string, string> = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED }

function allowAnyOrigin(headers: Headers): void {
  for (const name in CORS) headers.set(name, CORS[name]!)
}

/**
 * Headers with the CORS headers added, for answers made once and served many times: Bun copies a Headers object into
 * a Response in half the time it takes to build one from a literal or to set headers one by one.
 */
export const withCors = (headers: Record<string, string>): Headers => new Headers({ ...headers, ...CORS })

const JSON_HEADERS = withCors({ 'content-type': 'application/json' })

function preflight(request: Request): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': METHODS,
      'access-control-allow-headers': request.headers.get('access-control-request-headers') ?? '',
      'access-control-max-age': PREFLIGHT_MAX_AGE_S,
      vary: 'Access-Control-Request-Headers',
    },
  })
}

/** The path of a request URL, without parsing all of it (Bun leaves the URL relative when the Host is unusable). */
function pathOf(url: string): string {
  const start = url.charCodeAt(0) === 47 ? 0 : url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/** The socket's peer, or behind a trusted reverse proxy the address that proxy appended to X-Forwarded-For. */
export function clientAddress(request: Request, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const hops = request.headers
      .get('x-forwarded-for')
      ?.split(',')
      .map((h) => h.trim())
      .filter(Boolean)
    if (hops?.length) return hops[hops.length - 1]
  }
  return peer ?? 'unknown'
}

/** An answer made once and served many times: its body (text or bytes), status and complete headers (see withCors). */
export interface Prepared<Body extends string | Uint8Array<ArrayBuffer> | null = string> {
  body: Body
  init: { status: number; headers: Headers }
}

/** A route's answer: a response, the text of a 200 JSON answer (the wrapper adds all its headers at once), or a prepared one. */
export type Answer = Response | string | Prepared<string | Uint8Array<ArrayBuffer> | null>
export type Route = (request: Request) => Answer | Promise<Answer>

/**
 * A request without a Host that makes a URL (HTTP/1.0 without one, `Host: a b`, `Host: a:b:c`): routes read their
 * URL, so it is refused before any does. /health reads nothing of it, and HAProxy's default check is HTTP/1.0
 * without Host, so it is still answered.
 */
function unusableHost(url: string, path: string): boolean {
  return !URL.canParse(url) && (path || pathOf(url)) !== '/health'
}
const invalidHost = () =>
  errorResponse('INVALID_HOST', 'invalid Host header', 'the Host header must be a host name or address, with an optional port')

// X-Request-Id ties an answer to its log lines, so it goes with them: handled whenever requests are logged (TRELLIS_LOG
// info or debug, the default), skipped at warn and error. On a cached read it costs a small share of the throughput
// when requests are logged anyway, and twice that share when they are not (docs/performance.md has the figures).
// A caller's own id is kept when it is a plain token; anything else is replaced, so log lines stay parseable.
const CALLER_ID = /^[\w.:@/+=-]{1,128}$/

type Wrapped = (request: Request, server: Server<unknown>) => Response | Promise<Response>

/**
 * A wrapped route whose requests each run in a server span (method, route template, status), the child of the
 * caller's span when the request carries a W3C traceparent. Never the path: an access link's path is a credential.
 * The span ends when the answer is handed to Bun: a streamed body's transfer is not in it.
 */
function inSpans(traces: Tracer, wrapped: Wrapped, template: string | null): Wrapped {
  return (request, server) => {
    const method = request.method
    const attributes: Attributes = { 'http.request.method': method }
    if (template) attributes['http.route'] = template
    const parent = request.headers.get('traceparent')
    return traces.span(
      template ? `${method} ${template}` : method,
      attributes,
      async (span) => {
        const response = await wrapped(request, server)
        span.set('http.response.status_code', response.status)
        // The id its log lines carry (while requests are logged): from a trace to the lines, and back.
        const id = response.headers.get('x-request-id')
        if (id) span.set('trellis.request_id', id)
        if (response.status >= 500) span.fail(`answered ${response.status}`)
        return response
      },
      { kind: 'server', parent },
    )
  }
}

/**
 * Wraps a route. Built once per route, with no closure made per request: at the rate the hot reads are served, every
 * allocation and call on this path shows in throughput.
 */
export function requestWrapper(d: {
  limiter: RateLimiter | null
  requests: RequestMetrics
  log: Logger
  trustProxy: boolean
  /** Instances on one database: the versions of read-your-writes (read-your-writes.ts); null on the embedded engine. */
  versions?: ReadYourWrites | null
}) {
  const logRequests = d.log.enabled('info')

  function finish(
    request: Request,
    limit: Limit | undefined,
    started: number,
    path: string,
    series: number,
    id: string,
    answer: Answer,
  ): Response {
    let response: Response
    if (typeof answer === 'string') response = new Response(answer, { headers: JSON_HEADERS })
    else if (answer instanceof Response) {
      response = answer
      allowAnyOrigin(response.headers)
    } else response = new Response(answer.body, answer.init)
    if (limit) for (const [k, v] of Object.entries(limit.headers)) response.headers.set(k, v)
    if (id) response.headers.set('x-request-id', id)
    d.requests.observe(series, response.status, (performance.now() - started) / 1000)
    // Access tokens are credentials: keep them out of logs.
    if (logRequests)
      d.log.info('request', {
        request_id: id,
        method: request.method,
        path: path.startsWith('/v1/access/') ? '/v1/access/<token>' : path,
        status: response.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      })
    return response
  }

  // Read once, here: without traces the wrapper below is all a request runs, with no check of its own per request.
  const traces = tracer()

  /**
   * `series`: the metrics series of the route template (null: not matched by Bun's router, counted per method);
   * `template`: the template itself, which names the request's span when traces are on.
   */
  return (given: Route, series: number | null = null, template: string | null = null): Wrapped => {
    const versions = d.versions
    const route: Route = versions ? (request) => versions.around(request, given) : given
    const wrapped: Wrapped = (request, server) => {
      const started = performance.now()
      if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) return preflight(request)
      let id = ''
      if (logRequests) {
        const given = request.headers.get('x-request-id')
        id = given !== null && CALLER_ID.test(given) ? given : randomUUID()
      }
      const counted = series ?? d.requests.unrouted(request.method)
      const url = request.url
      const path = d.limiter || logRequests ? pathOf(url) : ''
      const limit = d.limiter?.check(request.method, path, clientAddress(request, server.requestIP(request)?.address, d.trustProxy))
      // A limit shared by instances may have to ask the database first (rate-limit-shared.ts).
      if (limit instanceof Promise) return limit.then((decided) => answer(route, request, decided, started, path, counted, id, url))
      return answer(route, request, limit, started, path, counted, id, url)
    }
    return traces === null ? wrapped : inSpans(traces, wrapped, template)
  }

  function answer(
    route: Route,
    request: Request,
    limit: Limit | undefined,
    started: number,
    path: string,
    counted: number,
    id: string,
    url: string,
  ): Response | Promise<Response> {
    if (limit?.rejected) return finish(request, limit, started, path, counted, id, limit.rejected)
    if (unusableHost(url, path)) return finish(request, limit, started, path, counted, id, invalidHost())
    // Lines logged while the route runs (payments, errors) carry the request's id too.
    const routed = id ? requestContext.run(id, route, request) : route(request)
    return routed instanceof Promise
      ? routed.then((a) => finish(request, limit, started, path, counted, id, a))
      : finish(request, limit, started, path, counted, id, routed)
  }
}
