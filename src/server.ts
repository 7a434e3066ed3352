// Opens the stores, serves HTTP and runs the jobs; stop() shuts down cleanly. main.ts and tests use it.
import { mcpKeptAnswers } from './routes/mcp.ts'
import { rateLimiter } from './edge/rate-limit.ts'
import { sharedRateLimiter } from './edge/rate-limit-shared.ts'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { checkLocalWebhooks, DATA_COMMANDS, isWildcardHost, urlHost, type Config, type NetworkSettings } from './config.ts'
import { bindChains, bindingsOf, recordedChains } from './store/chain-binding.ts'
import { recordsName, recordsPlace } from './store/open.ts'
import { lockDataDir } from './store/lock.ts'
import { ownerOnlyFromNow, tightenTree } from './store/permissions.ts'
import { buildApp, buildServices, startBackground, type Background } from './app.ts'
import { openDataContent, openDataRecords } from './ops/data-stores.ts'
import { serve } from './edge/serve.ts'
import { hotReads } from './routes/hot-reads.ts'
import { passChallenges } from './routes/hot-pass-challenge.ts'
import { controlSocket, CONTROL_SOCKET } from './ops/control.ts'
import { runOperation } from './ops/commands.ts'
import { operationRecord } from './ops/record.ts'
import { watchChangeFeed } from './ops/change-feed-watch.ts'
import { memoryMetrics, metricsRoutes, paymentMetrics, replicaMetrics, requestMetrics } from './edge/metrics.ts'
import { marketSize } from './domain/market-size.ts'
import { logger, type Logger } from './log.ts'
import { nowSeconds, setClockOffset } from './lib/clock.ts'
import { followTestClock } from './test-hooks.ts'
import { isStoreUnavailable } from './lib/store-faults.ts'
import { VERSION } from './version.ts'
import { redactUrl } from './chain/rpc.ts'
import { signatureBackend } from './chain/signatures.ts'
import { checkSettlementSettings } from './chain/mainnet.ts'
import { installTracer, tracer } from './lib/traces.ts'
import { readYourWrites } from './edge/read-your-writes.ts'

export interface RunningServer {
  url: string
  port: number
  stop(): Promise<void>
}

export async function startServer(config: Config): Promise<RunningServer> {
  checkSettlementSettings(config) // before anything is opened: a refusal leaves nothing behind
  checkLocalWebhooks(config)
  const log = logger(config.log)
  warnOfTestHooks(config, log)
  if (config.webhooksAllowLocal)
    log.warn('local webhooks allowed (TRELLIS_WEBHOOKS_ALLOW_LOCAL=1): endpoints may be plain http and loopback or private hosts', {
      host: config.host,
    })
  setClockOffset(config.clockOffsetS)
  ownerOnlyFromNow()
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const unlock = lockDataDir(config.dataDir)
  // A start that fails past this point (a migration, the content store, the port in use) closes what it opened, newest
  // first, and leaves no trellis.pid behind; once started, stop() closes them.
  await using failed = new AsyncDisposableStack()
  failed.defer(unlock)
  await startTraces(config, log)
  failed.defer(stopTraces)
  // Followed from the start: a move signalled once the server listens must find the handler, not end the process.
  // A move runs the jobs bound to a deadline at once, as the passing hours would have (once the jobs exist).
  let deadlinesMoved = () => {}
  const unfollowClock = config.clockFile
    ? followTestClock(config.clockFile, (offset) => {
        log.warn('test clock moved', { offset_s: offset })
        deadlinesMoved()
      })
    : () => {}
  failed.defer(unfollowClock)
  // Only the holder walks the tree: a second server racing this one for the lock must not touch files it is writing.
  const tightened = tightenTree(config.dataDir)
  // Refuses a database of a newer schema: the directory is not this binary's to hold.
  const records = await openDataRecords(config, { listen: true })
  failed.defer(() => records.close())
  records.replicas?.onSwitch(({ replica, inUse, lagS }, reason) =>
    inUse
      ? log.info('read replica in use', { replica, lag_s: lagS, reason })
      : log.warn('read replica not used: its reads go to the primary', { replica, lag_s: lagS, reason }),
  )
  const where = await recordsName(recordsPlace(config))
  const current = bindingsOf(config.networks)
  const binding = await records.transact(async (tx) => {
    // Rows that name no network were made on the first one bound until now (before a rebinding moves it).
    await tx.transactions.nameNetwork((await recordedChains(tx.meta))?.[0]?.network ?? config.network.name)
    return bindChains(tx.meta, where, current, config.allowChainChange)
  })
  if (binding.kind === 'rebound') {
    log.warn('data directory rebound to other chains (TRELLIS_ALLOW_CHAIN_CHANGE=1): its ledger now holds sales of both', {
      previous: binding.previous,
      current,
    })
  }
  if (binding.kind === 'added')
    log.info('data directory bound to more networks: its ledger may now hold their sales', { added: binding.added })
  const secret = await records.secret()
  const content = await openDataContent(config, records)
  failed.defer(() => content.close())

  let publicUrl = config.publicUrl ?? ''
  const startedAt = nowSeconds()
  let background: Background | null = null
  // A store out of reach is an outage to report, not a defect to debug: a warn line without a stack, at most one a
  // second (an outage under load fails thousands of requests), counting the 503s answered since the line before.
  let outageLineAt = 0
  let unreported = 0
  const logError = (error: unknown) => {
    if (!isStoreUnavailable(error)) return log.error('unhandled error', { error: String((error as Error)?.stack ?? error) })
    unreported++
    if (Date.now() - outageLineAt < 1000) return
    log.warn('answered 503: a store cannot be reached', { error: (error as Error).message, answered_503: unreported })
    outageLineAt = Date.now()
    unreported = 0
  }
  const services = await buildServices({
    config,
    records,
    content,
    secret,
    publicUrl: () => publicUrl,
    health: () => ({
      version: VERSION,
      uptime_s: nowSeconds() - startedAt,
      instance: records.instance,
      leader: background?.leadership.isLeader() ?? false,
      jobs: background?.jobs.status() ?? {},
    }),
    logError,
    logWarn: (msg, fields) => log.warn(msg, fields),
    logInfo: (msg, fields) => log.info(msg, fields),
  })
  background = await startBackground(config, services, records, content, log)
  failed.defer(() => background?.stop())
  const jobs = background.jobs
  deadlinesMoved = () => void jobs.deadlinesMoved()
  const requests = requestMetrics()
  // Instances on one database: a write's answer names the version a client's next request carries (docs/scale-out.md).
  const versions = records.cluster && readYourWrites(records.cluster, () => publicUrl.startsWith('https:'))
  const feedWatch = records.cluster && watchChangeFeed(records.changes, log)
  failed.defer(() => feedWatch?.stop())
  const operationRuns = operationRecord(log)
  const app = buildApp(services, logError, [
    metricsRoutes(requests, startedAt, {
      gauges: marketSize(records.reads),
      build: { version: VERSION, network: config.networks.map((network) => network.name).join(',') },
      more: () => [
        ...paymentMetrics(services.purchases.outcomes()),
        ...jobs.metrics(),
        ...operationRuns.metrics(),
        ...memoryMetrics({ content: () => content.cachedBytes(), reads: () => services.cached.stats().chars }),
        ...(versions?.metrics() ?? []),
        ...(feedWatch?.metrics() ?? []),
        ...replicaMetrics(records.replicas?.status() ?? []),
      ],
      adminKey: config.metricsAuth === 'admin' ? config.adminKey : null,
    }) as never,
  ])
  // Counted in memory by one process, or shared by the instances on one database.
  const limiter = !config.rateLimit ? null : records.cluster ? sharedRateLimiter(records.cluster) : rateLimiter()
  const server = listen(
    () =>
      serve(app, hotReads(services), {
        host: config.host,
        port: config.port,
        limiter,
        trustProxy: config.trustProxy,
        requests,
        log,
        listening: (clientAddress) => {
          services.clientAddress = clientAddress
        },
        posts: {
          '/mcp': mcpKeptAnswers((key) => services.cached.peek(key)),
          '/v1/feeds/:feed_id/pass/purchases': passChallenges(services),
        },
        versions,
      }),
    config,
  )
  failed.defer(() => server.stop(true))
  // Backups, checks and CAR import/export asked for by `trellis <command>` while this server holds the data.
  const access = background.dataAccess
  let control: { stop(): void } | null = null
  try {
    control = controlSocket(join(config.dataDir, CONTROL_SOCKET), (command, args, progress) => {
      log.info('operation', { command, args })
      const known = (DATA_COMMANDS as readonly string[]).includes(command) ? command : 'other' // a metric label: bounded
      return operationRuns.run(known, () => runOperation(access, command, args, progress))
    })
  } catch (error) {
    // A Unix socket path is limited to about 100 bytes: a deep data directory cannot have one.
    log.warn('no control socket: backups and checks of this data directory need the server stopped', { error: (error as Error).message })
  }
  failed.defer(() => control?.stop())
  const host = urlHost(config.host)
  if (!config.publicUrl) publicUrl = `http://${host}:${server.port}`
  const url = `http://${host}:${server.port}`
  // Before the start line: whoever waits for that line has seen the warning.
  if (isWildcardHost(config.host) && !config.publicUrl) {
    // Links handed out (access_url, content_url, the x402 resource) would name localhost, useless to other machines.
    log.warn(
      'listening on all interfaces without a public URL: access links and payment requirements will ' +
        'name localhost; set TRELLIS_PUBLIC_URL (--public-url)',
      { public_url: publicUrl },
    )
  }
  log.announce('listening', {
    url,
    public_url: publicUrl,
    docs: `${publicUrl}/v1/docs`,
    data_dir: config.dataDir,
    ...saidOf(config.network),
    ...(config.networks.length > 1 ? { networks: config.networks.map(saidOf) } : {}),
    traces: config.traces ? redactUrl(config.traces.url) : 'off',
    signatures: signatureBackend,
  })
  if (tightened) log.warn('data directory permissions tightened to owner-only', { data_dir: config.dataDir, changed: tightened })

  failed.move() // started: stop() closes them
  let stopping: Promise<void> | null = null
  return {
    url,
    port: server.port!,
    stop() {
      stopping ??= (async () => {
        control?.stop()
        await background?.stop()
        await server.stop(false) // finish in-flight requests
        await content.close()
        await records.close()
        unlock()
        unfollowClock()
        await stopTraces()
        log.announce('stopped')
      })()
      return stopping
    },
  }
}

/**
 * Installs the tracer when traces are configured, before anything that makes spans exists (the request wrapper is
 * built without tracing when there is none). The SDK is imported here, so a server without traces never loads it.
 */
async function startTraces(config: Config, log: Logger): Promise<void> {
  if (!config.traces) return
  const { otlpTracer } = await import('./ops/traces-otlp.ts')
  installTracer(otlpTracer(config.traces, VERSION, (message, fields) => log.warn(message, fields)))
}

/** Sends the spans still buffered and uninstalls the tracer. */
async function stopTraces(): Promise<void> {
  const t = tracer()
  installTracer(null)
  await t?.shutdown()
}

/** Bun.serve, its failures as one line naming the address (Bun's own say `ENOTTY … listen` or ask about the port). */
function listen<T>(serve: () => T, { host, port }: Pick<Config, 'host' | 'port'>): T {
  try {
    return serve()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason =
      code === 'EADDRINUSE'
        ? 'the port is in use'
        : code === 'EADDRNOTAVAIL'
          ? 'no interface of this machine has that address'
          : code === 'EACCES'
            ? 'permission denied (a port below 1024 needs privileges)'
            : code === 'ENOTFOUND' || code === 'EAI_NONAME'
              ? 'the host name does not resolve'
              : `${(error as Error).message}`
    throw new Error(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${reason}`)
  }
}

/** Test hooks set on a server say so at start, before its start line: whether they act or are ignored, and why. */
function warnOfTestHooks({ testHooks }: Config, log: Pick<Logger, 'warn'>): void {
  if (testHooks.set.length === 0) return
  if (testHooks.allowed) log.warn('test hooks active: this server is for tests, never for production', { hooks: testHooks.set })
  else log.warn(`test hooks ignored: ${testHooks.ignoredBecause}`, { hooks: testHooks.set })
}

/** A network sold on, as the start line says it: what it settles with, with no secret in it. */
const saidOf = (network: NetworkSettings) => ({
  network: network.name,
  chain_id: network.chainId,
  settlement: network.settlement,
  token: network.usdcAddress,
  rpc: redactUrl(network.rpcUrl),
  ...(network.settlement === 'facilitator'
    ? { facilitator: redactUrl(network.facilitatorUrl), facilitator_auth: network.facilitatorAuth.kind }
    : {}),
})
