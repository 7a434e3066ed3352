// Serving the app. Every route of the app is also a route of Bun's router, so its template is known before Elysia
// runs (metrics count by template at no cost per request); the hottest reads answer there from their cached JSON,
// everything else goes on to Elysia. The request wrapper (request-wrapper.ts) goes around both as plain functions,
// not Elysia hooks, which cost a cached read up to a third of its speed (docs/performance.md, "Figures that were in the
// code's comments").
import type { Elysia } from 'elysia'
import { clientAddress, requestWrapper, type Answer, type Route } from './request-wrapper.ts'
import type { RateLimiter } from './rate-limit.ts'
import type { RequestMetrics } from './metrics.ts'
import type { Logger } from '../log.ts'
import type { ReadYourWrites } from './read-your-writes.ts'

const MAX_BODY_BYTES = 64 * 1024 * 1024 // backstop; routes enforce their own, smaller limits while reading
/** Methods Bun's router dispatches on; anything else (and HEAD, which Bun answers from GET) goes to fetch. */
const ROUTED = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

export interface ServeOptions {
  host: string
  port: number
  limiter: RateLimiter | null
  trustProxy: boolean
  requests: RequestMetrics
  log: Logger
  /** Told, once the server listens, how to find a request's client address (behind a trusted proxy or not). */
  listening?: (clientAddress: (request: Request) => string) => void
  /** POST routes answered first by a HotPost, by route template (each must be a POST route of the app). */
  posts?: Record<string, HotPost>
  /** Read-your-writes across instances (read-your-writes.ts); absent on the embedded engine. */
  versions?: ReadYourWrites | null
}

/** A hot read: an answer from Bun's router (see Answer), or null: Elysia answers. */
export type HotRead = (request: Request & { params: Record<string, string> }) => Answer | null
/** The hot reads by route template (routes/hot-reads.ts): each must be a GET route of the app. */
export type HotReads = Record<string, HotRead>
/** A POST answered before Elysia when it can be: an answer, or the request to hand Elysia (its body given again if read). */
export type HotPost = (request: Request) => Promise<Answer | Request>

type BunRoutes = Record<string, Record<string, (request: Request, server: Bun.Server<unknown>) => Response | Promise<Response>>>

export function serve(app: Elysia<any, any, any, any, any, any, any>, hot: HotReads, o: ServeOptions) {
  // Compile Elysia's routes once, up front, so the first request does not pay for it.
  const handle = app.compile().fetch
  const wrap = requestWrapper({ limiter: o.limiter, requests: o.requests, log: o.log, trustProxy: o.trustProxy, versions: o.versions })
  const routes: BunRoutes = {}
  for (const { method, path } of app.routes) {
    if (!ROUTED.has(method)) continue
    const series = o.requests.series(method, path)
    const fast = method === 'GET' ? hot[path] : undefined
    const post = method === 'POST' ? o.posts?.[path] : undefined
    // Whatever a hot read declines goes to Elysia.
    const route: Route = fast
      ? (request) => fast(request as Request & { params: Record<string, string> }) ?? handle(request)
      : post
        ? (request) => post(request).then((answer) => (answer instanceof Request ? handle(answer) : answer))
        : handle
    ;(routes[path] ??= {})[method] = wrap(route, series, path)
  }
  for (const path of Object.keys(hot)) if (!routes[path]?.GET) throw new Error(`hot read ${path} has no route in the app`)
  for (const path of Object.keys(o.posts ?? {})) if (!routes[path]?.POST) throw new Error(`hot POST ${path} has no route in the app`)
  const server = Bun.serve({
    hostname: o.host,
    port: o.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    idleTimeout: 60,
    routes,
    fetch: wrap(handle),
  })
  o.listening?.((request) => clientAddress(request, server.requestIP(request)?.address, o.trustProxy))
  return server
}
