// The composition root: a Trellis process is built here, once — the services, the long-reads threads and the jobs,
// and the Elysia app — over the records and the content store that ops/data-stores.ts opens for the server and the
// data commands alike (and verify-ledger's records, opened here). Nothing else opens a database or a store of its own.
import { waitForLease } from './store/records.ts'
import { Elysia } from 'elysia'
import type { Config } from './config.ts'
import type { Logger } from './log.ts'
import { openRecords, recordsPlace } from './store/open.ts'
import type { Records } from './store/stores.ts'
import { readMemo } from './store/memo.ts'
import type { ContentStore } from './content/store.ts'
import { authService } from './domain/auth.ts'
import { feedService } from './domain/feeds.ts'
import { entryService } from './domain/entries.ts'
import { searchService } from './domain/search.ts'
import { walletService } from './domain/wallets.ts'
import { categoryService } from './domain/categories.ts'
import { transactionService } from './domain/transactions.ts'
import { purchaseService } from './domain/purchases.ts'
import { accessLinkService } from './domain/access-links.ts'
import { passService } from './domain/passes.ts'
import { passFeedUrlService } from './domain/pass-feed-urls.ts'
import { signInWithX } from './domain/sign-in-with-x.ts'
import { statsService } from './domain/stats-service.ts'
import { moderationService } from './domain/moderation.ts'
import { webhookService } from './domain/webhooks.ts'
import { websubService } from './domain/websub.ts'
import { analyticsService } from './domain/analytics.ts'
import { challengeCounter } from './domain/challenges.ts'
import { ledgerAudit, type LedgerAudit } from './domain/ledger-audit.ts'
import { chainReaders, paymentEngines } from './chain/x402/engines.ts'
import { accessTokens } from './domain/access-tokens.ts'
import { signatureVerifier } from './chain/signatures.ts'
import { startJobs, type Jobs } from './jobs/index.ts'
import { startLeadership, type Leadership } from './jobs/leadership.ts'
import { longReads } from './jobs/long-reads.ts'
import { followSnapshots } from './jobs/snapshots.ts'
import type { DataAccess } from './ops/data.ts'
import { nowSeconds } from './lib/clock.ts'
import type { Services } from './routes/services.ts'
import { pageTokens } from './routes/pagination.ts'
import { errorHandling } from './edge/errors.ts'
import { healthRoutes } from './routes/health.ts'
import { authRoutes } from './routes/auth.ts'
import { feedRoutes } from './routes/feeds.ts'
import { entryRoutes } from './routes/entries.ts'
import { searchRoutes } from './routes/search.ts'
import { walletRoutes } from './routes/wallets.ts'
import { categoryRoutes } from './routes/categories.ts'
import { accessRoutes } from './routes/access-links.ts'
import { transactionRoutes } from './routes/transactions.ts'
import { adminRoutes } from './routes/admin.ts'
import { moderationRoutes } from './routes/moderation.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { leaderboardRoutes } from './routes/leaderboards.ts'
import { docsRoutes } from './routes/docs.ts'
import { notFoundPage } from './routes/pages.ts'
import { passPlugins, siteRoutes } from './routes/site.ts'
import { discoveryRoutes } from './routes/discovery.ts'
import { renderTopic, syndicationRoutes } from './routes/syndication.ts'
import { websubRoutes } from './routes/websub.ts'
import { mcpRoutes } from './routes/mcp.ts'
import { modelsPlugin } from './edge/openapi.ts'
import { VERSION } from './version.ts'

/** verify-ledger's records (at exactly this binary's schema, never migrated) and the ledger check over a chain reader of its own. */
export async function openLedgerCheck(config: Config): Promise<{ records: Records; audit: LedgerAudit }> {
  const records = await openRecords(recordsPlace(config), 'current')
  return { records, audit: ledgerAudit({ records, chains: chainReaders(config) }) }
}

/** Connections each long-reads thread may open to PostgreSQL: its reads run one at a time. */
const LONG_READ_CONNECTIONS = 2
/** How long a settlement waits for the relayer account while other instances sign with it. */
const RELAYER_WAIT_MS = 10_000
/** About how many characters a kept record (a feed, an entry, a link) weighs in the read memo. */
const KEPT_RECORD_CHARS = 1000

export interface Background {
  jobs: Jobs
  leadership: Leadership
  /** The data commands a running server is asked over its control socket: they run on a thread of their own. */
  dataAccess: DataAccess
  stop(): Promise<void>
}

/**
 * The server's threads and jobs. The leaderboards and ranks last published are served from the first request; the
 * leader's jobs rebuild and publish them on a thread. Resolves once the jobs that only write records (nonce cleanup, expiry) ran once.
 */
export async function startBackground(
  config: Config,
  services: Services & { ledgerAudit: LedgerAudit },
  records: Records,
  content: ContentStore,
  log: Logger,
): Promise<Background> {
  const snapshots = await followSnapshots(records, services.stats, log)
  // Another instance (or a command on the database) took a feed down or reinstated one.
  const unhearTakedowns = records.cluster?.hear(
    'takedowns',
    () =>
      void services.stats.takedownsChanged().catch((error: unknown) => log.warn('could not read the takedowns', { error: String(error) })),
  )
  const place = { ...recordsPlace({ ...config, dbPool: LONG_READ_CONNECTIONS }), application: 'trellis long reads' }
  const threads = { boards: longReads(place), checks: longReads(place), operations: longReads(place) }
  const stopThreads = () => Promise.all(Object.values(threads).map((thread) => thread.stop())).then(() => {})
  const leadership = await startLeadership((name) => records.lease(name), config.leaderPollS, log)
  const jobs = startJobs({
    log,
    auth: services.auth,
    entries: services.entries,
    passes: services.passes,
    purchases: services.purchases,
    webhooks: services.webhooks,
    websub: services.websub,
    challenges: services.challenges,
    stats: services.stats,
    ledgerAudit: services.ledgerAudit,
    threads,
    leadership,
    snapshots,
    cluster: records.cluster,
    statsRefreshS: config.statsRefreshS,
    rankingsRefreshS: config.rankingsRefreshS,
    reconcileS: config.reconcileS,
    ledgerCheckS: config.ledgerCheckS,
  })
  await jobs.ready // never rejects: a job's failure is logged and counted
  const inThread = (what: Parameters<typeof threads.operations.run>[0]) => threads.operations.run(what, nowSeconds())
  return {
    jobs,
    leadership,
    dataAccess: {
      dataDir: config.dataDir,
      content,
      cids: async () => (await inThread({ namedCids: true })).cids!,
      copyTo: async (path) => void (await inThread({ copyTo: path })),
      integrity: async () => (await inThread({ integrity: true })).integrity!,
      inconsistencies: async () => (await inThread({ checks: true })).problems!,
      secret: () => records.secret(),
      lease: (name) => records.lease(name),
      moderation: services.moderation,
    },
    async stop() {
      await jobs.stop()
      snapshots.stop()
      unhearTakedowns?.()
      await leadership.stop()
      await stopThreads()
    },
  }
}

export interface AppParts {
  config: Config
  /** The records, built once for this database (store/sqlite/records.ts). */
  records: Records
  content: ContentStore
  secret: Uint8Array
  publicUrl: () => string
  health: () => Record<string, unknown>
  logError: (error: unknown) => void
  logWarn: (msg: string, fields?: Record<string, unknown>) => void
  logInfo?: (msg: string, fields?: Record<string, unknown>) => void
}

export async function buildServices(p: AppParts): Promise<Services & { ledgerAudit: LedgerAudit }> {
  const records = p.records
  const verify = signatureVerifier(p.config.network.rpcConfigured ? p.config.network.rpcUrl : null)
  const chainIds = p.config.networks.map((network) => network.chainId)
  const auth = authService({
    records,
    verify,
    place: () => ({ host: new URL(p.publicUrl()).host, uri: p.publicUrl(), chainId: p.config.network.chainId, chainIds }),
    secret: p.secret,
  })
  const feeds = feedService({
    records,
    content: p.content,
    defaultNetwork: p.config.network.name,
    allowPrivateFetch: p.config.allowPrivateFetch,
    logFetch: p.logWarn,
  })
  // Instances sharing a database take turns with the relayer account (local settlement).
  const engines = paymentEngines(
    p.config,
    records.cluster ? (name) => waitForLease((lease) => records.lease(lease), name, RELAYER_WAIT_MS) : null,
  )
  const purchases = purchaseService({
    records,
    engines,
    log: p.logWarn,
    logInfo: p.logInfo,
    waitS: p.config.confirmTimeoutS,
    afterSettle: p.config.crashAfterSettle ? () => process.kill(process.pid, 'SIGKILL') : undefined,
    beforePending: p.config.pauseBeforePendingMs ? () => Bun.sleep(p.config.pauseBeforePendingMs) : undefined,
  })
  const entries = entryService({
    records,
    feeds,
    content: p.content,
    network: p.config.network.name,
    entitled: (address, entry) => purchases.entitled(address, entry),
  })
  const tokens = accessTokens(p.secret)
  const categories = categoryService({ records })
  await categories.seedIfEmpty()
  const wallets = walletService({ records })
  const stats = statsService({ records, wallets })
  await stats.takedownsChanged()
  const cached = readMemo(records.changes, p.config.readMemoMb * 1_000_000)
  const challenges = challengeCounter({ records })
  const websub = websubService({
    records,
    publicUrl: p.publicUrl,
    allowPrivate: p.config.allowPrivateFetch,
    render: (feedId, format) => renderTopic(services, feedId, format),
    retries: p.config.webhookRetries,
    log: p.logWarn,
  })
  const services: Services & { ledgerAudit: LedgerAudit } = {
    config: p.config,
    publicUrl: p.publicUrl,
    auth,
    feeds,
    entries,
    wallets,
    stats,
    challenges,
    analytics: analyticsService({ records, wallets, challenges, network: p.config.network.name }),
    search: searchService({ records }),
    moderation: moderationService({ records, changed: () => stats.takedownsChanged().catch(p.logError) }),
    webhooks: webhookService({
      records,
      network: p.config.network.name,
      allowPrivate: p.config.allowPrivateFetch,
      local: p.config.webhooksAllowLocal,
      retries: p.config.webhookRetries,
      log: p.logWarn,
    }),
    categories,
    transactions: transactionService({ records }),
    purchases,
    passes: passService({ records, feeds, network: p.config.network.name }),
    passFeedUrls: passFeedUrlService({
      records,
      feeds,
      entries,
      secret: p.secret,
      kept: (key, read) => cached.get(key, read, () => KEPT_RECORD_CHARS),
    }),
    siwx: signInWithX({ records, secret: p.secret, networks: p.config.networks, publicUrl: p.publicUrl, verify }),
    accessLinks: accessLinkService({ records, entries, tokens, kept: (key, read) => cached.get(key, read, () => KEPT_RECORD_CHARS) }),
    accessTokens: tokens,
    content: p.content,
    pages: pageTokens(p.secret),
    cached,
    health: p.health,
    websub,
    ledgerAudit: ledgerAudit({ records, chains: engines }),
  }
  return services
}

export function buildApp(s: Services, logError: (error: unknown) => void, extra: Elysia[] = []) {
  // Elysia finds the path in request.url by assuming a host of at least four characters unless told otherwise: with
  // `Host: api` (nginx's proxy_pass http://api;) every route it answers would be a 404.
  const app: Elysia<any, any, any, any, any, any, any> = new Elysia({ handler: { standardHostname: false } })
    .use(errorHandling(logError, (request) => notFoundPage(s, request)))
    .use(modelsPlugin)
    .use(healthRoutes(s))
    .use(docsRoutes(VERSION, () => app, s.publicUrl, s.config.networks))
    .use(authRoutes(s))
    .use(feedRoutes(s))
    .use(entryRoutes(s))
    .use(searchRoutes(s))
    .use(walletRoutes(s))
    .use(categoryRoutes(s))
    .use(adminRoutes(s))
    .use(moderationRoutes(s))
    .use(webhookRoutes(s))
    .use(leaderboardRoutes(s))
    .use(accessRoutes(s))
    .use(passPlugins(s))
    .use(transactionRoutes(s))
    .use(discoveryRoutes(s))
    .use(syndicationRoutes(s))
    .use(websubRoutes(s))
    .use(mcpRoutes(() => app, s.publicUrl, s.cached.get))
    .use(siteRoutes(s))
  for (const plugin of extra) app.use(plugin)
  return app
}
