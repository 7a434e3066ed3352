// Serving the app: the hottest reads from Bun's router straight to their cached JSON, everything else through
// Elysia, and every request through the edge (edge.ts). The edge wraps both as plain functions, not Elysia hooks:
// in a same-process A/B (wrk, 3 rounds) a cached read behind the edge ran at 62-63k req/s, and the same work as
// global Elysia hooks (onRequest, onAfterResponse) at 41-58k.
import type { Elysia } from 'elysia'
import type { Services } from './services.ts'
import { hotReads } from './hot-reads.ts'
import { httpEdge } from './edge.ts'
import { rateLimiter } from './rate-limit.ts'
import type { RequestMetrics } from './metrics.ts'
import type { Logger } from '../log.ts'

const MAX_BODY_BYTES = 64 * 1024 * 1024 // backstop; routes enforce their own, smaller limits while reading

export interface ServeOptions { host: string; port: number; rateLimit: boolean; trustProxy: boolean; requests: RequestMetrics; log: Logger }

export function serve(app: Elysia<any, any, any, any, any, any, any>, services: Services, o: ServeOptions) {
  // Compile Elysia's routes once, up front, so the first request does not pay for it.
  const handle = app.compile().fetch
  const edge = httpEdge({ limiter: o.rateLimit ? rateLimiter() : null, requests: o.requests, log: o.log, trustProxy: o.trustProxy })
  // Whatever a hot read declines goes to Elysia. (A GET route also takes HEAD; other methods go to fetch.)
  const routes = Object.fromEntries(Object.entries(hotReads(services)).map(([path, answer]) => [path,
    { GET: edge((request) => answer(request as Request & { params: Record<string, string> }) ?? handle(request)) }]))
  return Bun.serve({
    hostname: o.host,
    port: o.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    idleTimeout: 60,
    routes,
    fetch: edge(handle),
  })
}
