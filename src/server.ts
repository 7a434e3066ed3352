// Opens the stores, serves HTTP and runs the jobs; stop() shuts down cleanly. main.ts and tests use it.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config.ts'
import { openDb } from './store/db.ts'
import { lockDataDir } from './store/lock.ts'
import { loadSecret } from './store/secret.ts'
import { openContent } from './content/helia.ts'
import { buildApp, buildServices } from './app.ts'
import { rateLimiter } from './http/rate-limit.ts'
import { httpEdge } from './http/edge.ts'
import { hotReads } from './http/hot-reads.ts'
import { metricsRoutes, requestMetrics } from './http/metrics.ts'
import { marketGauges } from './store/gauges.ts'
import { logger } from './log.ts'
import { startJobs, type Jobs } from './jobs/index.ts'
import { loadPersisted } from './jobs/stats-files.ts'
import { nowSeconds, setClockOffset } from './lib/clock.ts'
import { VERSION } from './version.ts'
import { redactUrl } from './chain/rpc.ts'
import { signatureBackend } from './chain/signatures.ts'

export interface RunningServer {
  url: string
  port: number
  stop(): Promise<void>
}

const MAX_BODY_BYTES = 64 * 1024 * 1024 // backstop; routes enforce their own, smaller limits while reading

export async function startServer(config: Config): Promise<RunningServer> {
  const log = logger(config.log)
  setClockOffset(config.clockOffsetS)
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const unlock = lockDataDir(config.dataDir)
  const dbPath = join(config.dataDir, 'trellis.db')
  const db = openDb(dbPath)
  const secret = loadSecret(config.dataDir)
  let content
  try {
    content = await openContent(config.dataDir)
  } catch (error) {
    db.close()
    unlock()
    throw new Error(`cannot open the content store: ${(error as Error).message}`)
  }

  let publicUrl = config.publicUrl ?? ''
  const startedAt = nowSeconds()
  let jobs: Jobs | null = null
  const services = buildServices({
    config, db, content, secret,
    publicUrl: () => publicUrl,
    health: () => ({ version: VERSION, uptime_s: nowSeconds() - startedAt, jobs: jobs?.status() ?? {} }),
    logError: (error) => log.error('unhandled error', { error: String((error as Error)?.stack ?? error) }),
    logWarn: (msg, fields) => log.warn(msg, fields),
  })
  // Serve the last persisted leaderboards and ranks from the first request; the jobs rebuild them off-thread.
  const boards = loadPersisted(config.dataDir, 'boards')
  if (boards) services.market.installBoards(boards.boards)
  const ranks = loadPersisted(config.dataDir, 'ranks')
  if (ranks) services.market.installRanks(ranks.ranks)
  jobs = startJobs({
    db, dbPath, dataDir: config.dataDir, log, purchases: services.purchases, market: services.market, ledgerAudit: services.ledgerAudit,
    statsRefreshS: config.statsRefreshS, rankingsRefreshS: config.rankingsRefreshS, reconcileS: config.reconcileS, ledgerCheckS: config.ledgerCheckS,
  })
  const requests = requestMetrics()
  const app = buildApp(services, (error) => log.error('unhandled error', { error: String((error as Error)?.stack ?? error) }), [metricsRoutes(marketGauges(db), requests, startedAt, () => jobs?.metrics() ?? []) as never])
  // Compile Elysia's routes once, up front, so the first request does not pay for it.
  const handle = app.compile().fetch
  const edge = httpEdge({ limiter: config.rateLimit ? rateLimiter() : null, requests, log, trustProxy: config.trustProxy })
  // The hottest reads go from Bun's router straight to their cached JSON; whatever they decline goes to Elysia.
  // (A GET route also takes HEAD; other methods go to fetch.)
  const routes = Object.fromEntries(Object.entries(hotReads(services)).map(([path, answer]) => [path,
    { GET: edge((request) => answer(request as Request & { params: Record<string, string> }) ?? handle(request)) }]))

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    idleTimeout: 60,
    routes,
    fetch: edge(handle),
  })
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host
  if (!config.publicUrl) publicUrl = `http://${host}:${server.port}`
  const url = `http://${host}:${server.port}`
  log.announce('listening', {
    url, public_url: publicUrl, data_dir: config.dataDir, network: config.network.name, chain_id: config.network.chainId,
    settlement: config.settlement, token: config.network.usdcAddress, rpc: redactUrl(config.network.rpcUrl), signatures: signatureBackend,
    ...(config.settlement === 'facilitator' ? { facilitator: redactUrl(config.facilitatorUrl) } : {}),
  })

  let stopping: Promise<void> | null = null
  return {
    url,
    port: server.port!,
    stop() {
      stopping ??= (async () => {
        await jobs?.stop()
        await server.stop(false) // finish in-flight requests
        await content.close()
        db.close()
        unlock()
        log.announce('stopped')
      })()
      return stopping
    },
  }
}
