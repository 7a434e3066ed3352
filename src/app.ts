// Builds the Elysia app from the resource plugins and the services below them (used by main.ts and tests).
import { Elysia } from 'elysia'
import type { Config } from './config.ts'
import type { Db } from './store/sqlite/database.ts'
import type { Records } from './store/stores.ts'
import { readMemo } from './store/memo.ts'
import type { ContentStore } from './content/store.ts'
import { authService } from './domain/auth.ts'
import { feedService } from './domain/feeds.ts'
import { entryService } from './domain/entries.ts'
import { walletService } from './domain/wallets.ts'
import { categoryService } from './domain/categories.ts'
import { transactionService } from './domain/transactions.ts'
import { purchaseService } from './domain/purchases.ts'
import { accessLinkService } from './domain/access-links.ts'
import { statsService } from './domain/stats-service.ts'
import { ledgerAudit, type LedgerAudit } from './domain/ledger-audit.ts'
import { paymentEngine } from './chain/x402/engine.ts'
import { accessTokens } from './domain/access-tokens.ts'
import { signatureVerifier } from './chain/signatures.ts'
import type { Services } from './routes/services.ts'
import { pageTokens } from './routes/pagination.ts'
import { errorHandling } from './edge/errors.ts'
import { healthRoutes } from './routes/health.ts'
import { authRoutes } from './routes/auth.ts'
import { feedRoutes } from './routes/feeds.ts'
import { entryRoutes } from './routes/entries.ts'
import { walletRoutes } from './routes/wallets.ts'
import { categoryRoutes } from './routes/categories.ts'
import { accessRoutes } from './routes/access-links.ts'
import { transactionRoutes } from './routes/transactions.ts'
import { adminRoutes } from './routes/admin.ts'
import { leaderboardRoutes } from './routes/leaderboards.ts'
import { docsRoutes } from './routes/docs.ts'
import { modelsPlugin } from './edge/openapi.ts'
import { VERSION } from './version.ts'

export interface AppParts {
  config: Config
  /** The records, built once for this database (store/sqlite/records.ts). */
  records: Records
  /** The embedded database itself, for what does not go through the records port yet (the market's reads). */
  db: Db
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
  const auth = authService({
    records,
    verify: signatureVerifier(p.config.network.rpcConfigured ? p.config.network.rpcUrl : null),
    host: () => new URL(p.publicUrl()).host,
  })
  const feeds = feedService({ records, content: p.content, defaultNetwork: p.config.network.name, allowPrivateFetch: p.config.allowPrivateFetch, logFetch: p.logWarn })
  const engine = paymentEngine(p.config)
  const purchases = purchaseService({
    records, engine, network: p.config.network, log: p.logWarn, logInfo: p.logInfo,
    afterSettle: p.config.crashAfterSettle ? () => process.kill(process.pid, 'SIGKILL') : undefined,
  })
  const entries = entryService({ records, feeds, content: p.content, network: p.config.network.name, owns: purchases.owns })
  const tokens = accessTokens(p.secret)
  const categories = categoryService({ records })
  await categories.seedIfEmpty()
  const wallets = walletService({ records })
  return {
    config: p.config,
    publicUrl: p.publicUrl,
    auth,
    feeds,
    entries,
    wallets,
    market: statsService({ records, wallets }),
    categories,
    transactions: transactionService({ records }),
    purchases,
    accessLinks: accessLinkService({ records, entries, tokens }),
    accessTokens: tokens,
    content: p.content,
    pages: pageTokens(p.secret),
    cached: readMemo(records.changes),
    health: p.health,
    ledgerAudit: ledgerAudit({ records, chain: engine.chain, token: p.config.network.usdcAddress }),
  }
}

export function buildApp(s: Services, logError: (error: unknown) => void, extra: Elysia[] = []) {
  // Elysia finds the path in request.url by assuming a host of at least four characters unless told otherwise: with
  // `Host: api` (nginx's proxy_pass http://api;) every route it answers would be a 404.
  const app: Elysia<any, any, any, any, any, any, any> = new Elysia({ handler: { standardHostname: false } })
    .use(errorHandling(logError))
    .use(modelsPlugin)
    .use(healthRoutes(s))
    .use(docsRoutes(VERSION, () => app, s.publicUrl))
    .use(authRoutes(s))
    .use(feedRoutes(s))
    .use(entryRoutes(s))
    .use(walletRoutes(s))
    .use(categoryRoutes(s))
    .use(adminRoutes(s))
    .use(leaderboardRoutes(s))
    .use(accessRoutes(s))
    .use(transactionRoutes(s))
  for (const plugin of extra) app.use(plugin)
  return app
}
