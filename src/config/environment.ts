// The variables without a flag: which chain endpoints and token, who settles payments and with which credentials,
// who may read /metrics, the jobs' intervals, and the test hooks. A plain one is a row of SETTINGS (and a line in
// the help's "Environment only" list, which groups them by hand); those that must agree with others are read by
// the functions below, which check them together.
import { isIP } from 'node:net'
import { testHooks, type TestHooks } from '../test-hooks.ts'
import {
  ConfigError,
  integer,
  oneOf,
  onOff,
  optionalText,
  read,
  seconds,
  setToOne,
  signedInteger,
  type Environment,
  type S3Place,
  type Setting,
  type ValuesOf,
} from './values.ts'

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const SETTINGS = {
  /** TRELLIS_ALLOW_CHAIN_CHANGE=1: start although the data directory was bound to another network or token. */
  allowChainChange: { variable: 'TRELLIS_ALLOW_CHAIN_CHANGE', read: setToOne },
  adminKey: { variable: 'TRELLIS_ADMIN_KEY', read: optionalText },
  statsRefreshS: { variable: 'TRELLIS_STATS_REFRESH_S', read: integer(60, 1, 86400 * 7) },
  rankingsRefreshS: { variable: 'TRELLIS_RANKINGS_REFRESH_S', read: integer(86400, 1, 86400 * 30) },
  /** Seconds between passes that let the chain decide pending payments. */
  reconcileS: { variable: 'TRELLIS_RECONCILE_S', read: integer(30, 1, 3600) },
  /** Seconds between checks of the ledger against the chain. */
  ledgerCheckS: { variable: 'TRELLIS_LEDGER_CHECK_S', read: integer(300, 1, 86400) },
  /** How long a settlement waits for its receipt before answering 503 (the payment stays pending). */
  confirmTimeoutS: { variable: 'TRELLIS_CONFIRM_TIMEOUT_S', read: integer(30, 1, 600) },
  /** Widest eth_getLogs block range to ask for (halved when the RPC refuses a range). */
  logWindowBlocks: { variable: 'TRELLIS_LOG_WINDOW_BLOCKS', read: integer(2000, 1, 1_000_000) },
  rateLimit: { variable: 'TRELLIS_RATE_LIMIT', read: onOff('on') },
  /** Behind one reverse proxy: take the client address from the last X-Forwarded-For hop. */
  trustProxy: { variable: 'TRELLIS_TRUST_PROXY', read: onOff('off') },
  log: { variable: 'TRELLIS_LOG', read: oneOf(LOG_LEVELS, 'info') },
  /**
   * Connections to PostgreSQL this process may open for requests, records and content alike (the long-reads threads
   * have their own few).
   */
  dbPool: { variable: 'TRELLIS_DB_POOL', read: integer(10, 1, 500) },
  /** Millions of characters of read results kept until the records change (0: none, every read goes to the records). */
  readMemoMb: { variable: 'TRELLIS_READ_MEMO_MB', read: integer(32, 0, 4096) },
  /** Seconds between an instance's tries to become the leader (the one that runs the once-per-database jobs). */
  leaderPollS: { variable: 'TRELLIS_LEADER_POLL_S', read: seconds(2, 0.1, 3600) },
  /** A read replica further behind the primary than this (seconds, fractions allowed) is not read until it catches up. */
  replicaMaxLagS: { variable: 'TRELLIS_REPLICA_MAX_LAG_S', read: seconds(5, 0.1, 3600) },
  /** Content in PostgreSQL: a block stored more recently than this is never collected (an import may still need it). */
  gcGraceS: { variable: 'TRELLIS_GC_GRACE_S', read: integer(86400, 0, 86400 * 365) },
  /** Webhooks to plain http and loopback/private hosts, on a development server only (checkLocalWebhooks). */
  webhooksAllowLocal: { variable: 'TRELLIS_WEBHOOKS_ALLOW_LOCAL', read: setToOne },
} satisfies Record<string, Setting<unknown>>

export type SettingValues = ValuesOf<typeof SETTINGS>

export type ContentPlace = 'leveldb' | 'postgres' | S3Place

/**
 * Where content blocks are kept: LevelDB in the data directory (embedded records), the `blocks` table of the
 * records' PostgreSQL, or an S3-compatible bucket indexed there. LevelDB beside PostgreSQL records is refused: content
 * would live on one machine while its records say it exists for every instance and every backup of the database.
 */
/** A direct URL is the pooled database URL's companion (store/postgres/pooler.ts): alone it would be ignored. */
export function directUrlFrom(databaseUrl: string | null, directUrl: string | null): string | null {
  if (directUrl && !databaseUrl)
    throw new ConfigError(
      '--database-direct-url (TRELLIS_DATABASE_DIRECT_URL) goes with --database-url (TRELLIS_DATABASE_URL): set that too',
    )
  return directUrl
}

/** Replicas are of the records' PostgreSQL: the embedded engine has none to follow. */
export function replicaUrlsFrom(databaseUrl: string | null, replicaUrls: string[]): string[] {
  if (replicaUrls.length > 0 && !databaseUrl)
    throw new ConfigError(
      '--database-replica-url (TRELLIS_DATABASE_REPLICA_URL) goes with --database-url (TRELLIS_DATABASE_URL): set that too',
    )
  return replicaUrls
}

export function contentFrom(asked: ContentPlace | null, databaseUrl: string | null): ContentPlace {
  const place = asked ?? (databaseUrl ? 'postgres' : 'leveldb')
  if (place === 'postgres' && !databaseUrl)
    throw new ConfigError("content in postgres means the records' PostgreSQL: set --database-url (TRELLIS_DATABASE_URL) too")
  if (typeof place === 'object' && !databaseUrl)
    throw new ConfigError(
      "content in S3 is indexed in the records' PostgreSQL (so a collection never races an upload): " +
        'set --database-url (TRELLIS_DATABASE_URL) too',
    )
  if (place === 'leveldb' && databaseUrl)
    throw new ConfigError(
      'content in leveldb is refused with records in PostgreSQL (content must live where the records ' +
        'are): leave --content-url (TRELLIS_CONTENT_URL) unset, or set postgres',
    )
  return place
}

/** 'admin': /metrics answers only with the admin-api-key header. */
export function metricsAuthFrom(env: Environment): 'public' | 'admin' {
  const metricsAuth = read(env, 'TRELLIS_METRICS_AUTH', oneOf(['public', 'admin'] as const, 'public'))
  if (metricsAuth === 'admin' && !env.TRELLIS_ADMIN_KEY)
    throw new ConfigError('TRELLIS_METRICS_AUTH=admin needs TRELLIS_ADMIN_KEY (the admin-api-key header /metrics then asks for)')
  return metricsAuth
}

/** A loopback address or localhost: only this machine reaches a server bound there. */
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))

/**
 * TRELLIS_WEBHOOKS_ALLOW_LOCAL=1 lets webhooks go to plain http and to loopback and private hosts: an SSRF hole in any
 * server others reach. So it is refused (one line) unless only this machine reaches the server: it listens on
 * loopback, names no other host as its public URL, is behind no proxy, and settles on a testnet.
 */
export function checkLocalWebhooks(c: {
  webhooksAllowLocal: boolean
  host: string
  publicUrl: string | null
  trustProxy: boolean
  network: { name: string; mainnet: boolean }
}): void {
  if (!c.webhooksAllowLocal) return
  const refuse = (why: string): never => {
    throw new ConfigError(`TRELLIS_WEBHOOKS_ALLOW_LOCAL=1 is for a development server only this machine reaches: ${why}`)
  }
  if (!isLoopback(c.host)) refuse(`it listens on ${c.host} (--host / TRELLIS_HOST must be 127.0.0.1, ::1 or localhost)`)
  const named = c.publicUrl ? new URL(c.publicUrl).hostname.replace(/^\[|\]$/g, '') : null
  if (named !== null && !isLoopback(named)) refuse(`its public URL names ${named} (--public-url / TRELLIS_PUBLIC_URL)`)
  if (c.trustProxy) refuse('TRELLIS_TRUST_PROXY=on says a proxy forwards requests to it')
  if (c.network.mainnet) refuse(`TRELLIS_NETWORK=${c.network.name} is mainnet`)
}

export interface TestHookSettings {
  /** TRELLIS_TEST_ALLOW_PRIVATE_FETCH: lets image_url and webhook endpoints reach loopback/private addresses. Never set in production. */
  allowPrivateFetch: boolean
  /** TRELLIS_TEST_WEBHOOK_RETRY_S (seconds between attempts, comma-separated) and _GIVE_UP_S: a day of retries in seconds. */
  webhookRetries: { afterS: number[]; giveUpS: number } | null
  /** TRELLIS_TEST_CLOCK_OFFSET_S: seconds added to the server clock. */
  clockOffsetS: number
  /** TRELLIS_TEST_CLOCK_FILE: the file whose seconds become the offset on each SIGUSR2 (test-hooks.ts, followTestClock). */
  clockFile: string | null
  /** TRELLIS_TEST_CRASH_AFTER_SETTLE: die (SIGKILL) right after a settlement succeeds, before it is recorded. */
  crashAfterSettle: boolean
  /** TRELLIS_TEST_PAUSE_BEFORE_PENDING_MS: a payment waits this long between its ownership check and its pending row. */
  pauseBeforePendingMs: number
  /** Which test hooks are set, and whether they take effect (see test-hooks.ts). */
  testHooks: TestHooks
}

/** The test hooks, each off unless hooks are allowed (test-hooks.ts). */
export function testHookSettings(env: Environment): TestHookSettings {
  const hooks = testHooks(env)
  return {
    allowPrivateFetch: hooks.allowed && env.TRELLIS_TEST_ALLOW_PRIVATE_FETCH === '1',
    clockOffsetS: hooks.allowed ? read(env, 'TRELLIS_TEST_CLOCK_OFFSET_S', signedInteger) : 0,
    clockFile: hooks.allowed ? env.TRELLIS_TEST_CLOCK_FILE || null : null,
    crashAfterSettle: hooks.allowed && env.TRELLIS_TEST_CRASH_AFTER_SETTLE === '1',
    pauseBeforePendingMs: hooks.allowed ? Number(env.TRELLIS_TEST_PAUSE_BEFORE_PENDING_MS ?? 0) || 0 : 0,
    webhookRetries:
      hooks.allowed && env.TRELLIS_TEST_WEBHOOK_RETRY_S
        ? { afterS: env.TRELLIS_TEST_WEBHOOK_RETRY_S.split(',').map(Number), giveUpS: Number(env.TRELLIS_TEST_WEBHOOK_GIVE_UP_S ?? 86_400) }
        : null,
    testHooks: hooks,
  }
}
