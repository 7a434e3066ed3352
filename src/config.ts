// The only place that reads environment variables; command-line.ts puts the flags over them (flags win).
import { isIP } from 'node:net'
import { testHooks, type TestHooks } from './test-hooks.ts'

export type NetworkName = 'base' | 'base-sepolia'
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface NetworkInfo {
  name: NetworkName
  chainId: number
  rpcUrl: string
  /** True when TRELLIS_RPC_URL was given: only then do signatures fall back to ERC-1271 calls. */
  rpcConfigured: boolean
  usdcAddress: `0x${string}`
  usdcName: string
  usdcVersion: string
}

/** Credentials sent with every facilitator call (src/chain/facilitator-auth.ts). */
export type FacilitatorAuth =
  | { kind: 'none' }
  /** TRELLIS_FACILITATOR_BEARER: a static `Authorization: Bearer` token. */
  | { kind: 'bearer'; token: string }
  /** TRELLIS_CDP_API_KEY_ID + TRELLIS_CDP_API_KEY_SECRET: a Coinbase Developer Platform key signing each call. */
  | { kind: 'cdp'; keyId: string; keySecret: string }

export interface Config {
  host: string
  port: number
  dataDir: string
  publicUrl: string | null // null: derived from the bound address once listening
  network: NetworkInfo
  settlement: 'facilitator' | 'local'
  facilitatorUrl: string
  facilitatorAuth: FacilitatorAuth
  /** TRELLIS_ALLOW_CHAIN_CHANGE=1: start although the data directory was bound to another network or token. */
  allowChainChange: boolean
  relayerKey: string | null
  adminKey: string | null
  /** 'admin': /metrics answers only with the admin-api-key header. */
  metricsAuth: 'public' | 'admin'
  statsRefreshS: number
  rankingsRefreshS: number
  /** Seconds between passes that let the chain decide pending payments. */
  reconcileS: number
  /** Seconds between checks of the ledger against the chain. */
  ledgerCheckS: number
  /** How long a settlement waits for its receipt before answering 503 (the payment stays pending). */
  confirmTimeoutS: number
  /** Widest eth_getLogs block range to ask for (halved when the RPC refuses a range). */
  logWindowBlocks: number
  rateLimit: boolean
  /** Behind one reverse proxy: take the client address from the last X-Forwarded-For hop. */
  trustProxy: boolean
  log: LogLevel
  /** Test-only (TRELLIS_TEST_ALLOW_PRIVATE_FETCH): lets image_url fetch loopback/private addresses. Never set in production. */
  allowPrivateFetch: boolean
  /** Test-only: seconds added to the server clock (TRELLIS_TEST_CLOCK_OFFSET_S). */
  clockOffsetS: number
  /** Test-only fault injection: die (SIGKILL) right after a settlement succeeds, before it is recorded. */
  crashAfterSettle: boolean
  /** Which test hooks are set, and whether they take effect (see test-hooks.ts). */
  testHooks: TestHooks
}

export const NETWORKS: Record<NetworkName, Omit<NetworkInfo, 'rpcConfigured'>> = {
  base: {
    name: 'base',
    chainId: 8453,
    rpcUrl: 'https://mainnet.base.org',
    usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    usdcName: 'USD Coin',
    usdcVersion: '2',
  },
  'base-sepolia': {
    name: 'base-sepolia',
    chainId: 84532,
    rpcUrl: 'https://sepolia.base.org',
    usdcAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    usdcName: 'USDC',
    usdcVersion: '2',
  },
}

export const HELP = `trellis — self-hosted content-feed marketplace server

Usage: trellis [serve] [options]
       trellis verify-ledger [options]   check every ledger row against its on-chain transfer, every failed
                                         payment against the chain, and the totals against the ledger
                                         (exit 0: the ledger equals the chain; 1: a mismatch, listed as JSON;
                                         2: the database cannot be used; 3: the chain could not be read)
       trellis backup <dir> [options]    a consistent backup (database, content as a CAR file, key) into a
                                         new or empty directory; a running server makes it while it serves
       trellis restore <dir> [options]   a backup into a new or empty data directory (the server stopped)
       trellis verify [options]          the database is sound, every entry's and cover's blocks are present
                                         and hash to their CIDs, the totals equal the ledger (exit 0 / 1)
       trellis healthcheck [options]     exit 0 when the server on --host/--port answers /health (for containers)
       trellis export-car <cid>... --out <file.car> [options]    items as a CAR file
       trellis import-car <file.car> [options]                  blocks of a CAR file into the content store
       trellis gc [--dry-run] [options]  removes content no entry or cover names (left by failed uploads, or
                                         imported and never used); a running server does it while it serves
       trellis version                   the version, the commit and the build date (same as --version)
       trellis help                      this help (same as --help)

Options of export-car and gc only: --out <file.car> (export-car), --dry-run (gc: list, remove nothing).
An unknown option, a missing value or a bad one stops with one line naming it (exit 2).

Options of every command (flag = environment variable; flags win):
  --host <addr>        TRELLIS_HOST          bind address: an IP address or a host name (default 127.0.0.1)
  --port <n>           TRELLIS_PORT          port, 0 = any free port (default 8402)
  --data-dir <path>    TRELLIS_DATA_DIR      everything persistent (default ./trellis-data)
  --public-url <url>   TRELLIS_PUBLIC_URL    base of access_url and x402 resource (default http://<host>:<port>)
  --network <name>     TRELLIS_NETWORK       base | base-sepolia (default base-sepolia)
  -h, --help                                 show this help
  -v, --version                              print the version, commit and build date

Environment only:
  TRELLIS_RPC_URL, TRELLIS_USDC_ADDRESS, TRELLIS_USDC_NAME, TRELLIS_USDC_VERSION,
  TRELLIS_SETTLEMENT (facilitator|local), TRELLIS_FACILITATOR_URL, TRELLIS_RELAYER_KEY,
  TRELLIS_FACILITATOR_BEARER (a static bearer token for the facilitator),
  TRELLIS_CDP_API_KEY_ID + TRELLIS_CDP_API_KEY_SECRET (Coinbase's facilitator, which settles Base mainnet),
  TRELLIS_ALLOW_CHAIN_CHANGE (1: rebind a data directory to another network or token),
  TRELLIS_ADMIN_KEY, TRELLIS_METRICS_AUTH (public|admin), TRELLIS_STATS_REFRESH_S (60), TRELLIS_RANKINGS_REFRESH_S (86400),
  TRELLIS_RECONCILE_S (30), TRELLIS_LEDGER_CHECK_S (300), TRELLIS_CONFIRM_TIMEOUT_S (30),
  TRELLIS_LOG_WINDOW_BLOCKS (2000),
  TRELLIS_RATE_LIMIT (on|off), TRELLIS_TRUST_PROXY (off|on: client address from X-Forwarded-For),
  TRELLIS_LOG (debug|info|warn|error)

Test hooks (TRELLIS_TEST_*) work only from source with TRELLIS_TEST_HOOKS=1; the executable ignores them.
`

export class ConfigError extends Error {}

/** Whether the bind address is every interface's. */
export const isWildcardHost = (host: string) => host === '0.0.0.0' || host === '::'
/** A bind address as a URL's host: IPv6 in brackets; every-interface as `wildcard`, a name that reaches this machine. */
export const urlHost = (host: string, wildcard = 'localhost') => (isWildcardHost(host) ? wildcard : host.includes(':') ? `[${host}]` : host)

/** The commands on a data directory (src/ops). */
export const DATA_COMMANDS = ['backup', 'restore', 'export-car', 'import-car', 'verify', 'gc'] as const
export type DataCommand = (typeof DATA_COMMANDS)[number]

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}`)
  return n
}

function signedInteger(name: string, raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0
  if (!/^-?\d{1,10}$/.test(raw)) throw new ConfigError(`${name} must be an integer`)
  return Number(raw)
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}`)
  return raw as T
}

function address(name: string, raw: string | undefined, fallback: `0x${string}`): `0x${string}` {
  if (raw === undefined || raw === '') return fallback
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new ConfigError(`${name} must be a 0x address`)
  return raw as `0x${string}`
}

/** An address or a name to listen on, checked here: Bun's own error for a malformed one does not name it. */
function bindHost(name: string, raw: string | undefined): string {
  if (raw === undefined || raw === '') return '127.0.0.1'
  const hostname = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i
  if (!isIP(raw) && !hostname.test(raw)) throw new ConfigError(`${name} must be an IP address or a host name, got "${raw}"`)
  return raw
}

function url(name: string, raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null
  try {
    const parsed = new URL(raw)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error()
    return raw.replace(/\/+$/, '')
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL`)
  }
}

export function configFrom(env: Record<string, string | undefined>): Config {
  const networkName = oneOf('TRELLIS_NETWORK', env.TRELLIS_NETWORK, ['base', 'base-sepolia'] as const, 'base-sepolia')
  const known = NETWORKS[networkName]
  const relayerKey = env.TRELLIS_RELAYER_KEY || null
  if (relayerKey && !/^0x[0-9a-fA-F]{64}$/.test(relayerKey)) throw new ConfigError('TRELLIS_RELAYER_KEY must be a 0x-prefixed 32-byte hex key')
  const settlement = oneOf('TRELLIS_SETTLEMENT', env.TRELLIS_SETTLEMENT, ['facilitator', 'local'] as const, 'facilitator')
  if (settlement === 'local' && !relayerKey) throw new ConfigError('TRELLIS_SETTLEMENT=local needs TRELLIS_RELAYER_KEY (the wallet that pays gas)')
  const metricsAuth = oneOf('TRELLIS_METRICS_AUTH', env.TRELLIS_METRICS_AUTH, ['public', 'admin'] as const, 'public')
  if (metricsAuth === 'admin' && !env.TRELLIS_ADMIN_KEY) throw new ConfigError('TRELLIS_METRICS_AUTH=admin needs TRELLIS_ADMIN_KEY (the admin-api-key header /metrics then asks for)')
  const hooks = testHooks(env)
  const bearer = env.TRELLIS_FACILITATOR_BEARER || null
  const cdpKeyId = env.TRELLIS_CDP_API_KEY_ID || null
  const cdpKeySecret = env.TRELLIS_CDP_API_KEY_SECRET || null
  if (Boolean(cdpKeyId) !== Boolean(cdpKeySecret)) throw new ConfigError('TRELLIS_CDP_API_KEY_ID and TRELLIS_CDP_API_KEY_SECRET go together (a CDP API key: its id and its secret)')
  if (bearer && cdpKeyId) throw new ConfigError('set TRELLIS_FACILITATOR_BEARER or the TRELLIS_CDP_API_KEY_ID/_SECRET pair, not both')
  if (bearer !== null && !/^[\x21-\x7e]+$/.test(bearer)) throw new ConfigError('TRELLIS_FACILITATOR_BEARER must be one token of printable characters')
  const facilitatorAuth: FacilitatorAuth = cdpKeyId && cdpKeySecret ? { kind: 'cdp', keyId: cdpKeyId, keySecret: cdpKeySecret } : bearer ? { kind: 'bearer', token: bearer } : { kind: 'none' }
  // A CDP key without a facilitator URL means Coinbase's facilitator (Base mainnet and Base Sepolia).
  const defaultFacilitator = facilitatorAuth.kind === 'cdp' ? 'https://api.cdp.coinbase.com/platform/v2/x402' : 'https://x402.org/facilitator'
  return {
    host: bindHost('TRELLIS_HOST', env.TRELLIS_HOST),
    port: integer('TRELLIS_PORT', env.TRELLIS_PORT, 8402, 0, 65535),
    dataDir: env.TRELLIS_DATA_DIR || './trellis-data',
    publicUrl: url('TRELLIS_PUBLIC_URL', env.TRELLIS_PUBLIC_URL),
    network: {
      name: networkName,
      chainId: known.chainId,
      rpcUrl: url('TRELLIS_RPC_URL', env.TRELLIS_RPC_URL) ?? known.rpcUrl,
      rpcConfigured: Boolean(env.TRELLIS_RPC_URL),
      usdcAddress: address('TRELLIS_USDC_ADDRESS', env.TRELLIS_USDC_ADDRESS, known.usdcAddress),
      usdcName: env.TRELLIS_USDC_NAME || known.usdcName,
      usdcVersion: env.TRELLIS_USDC_VERSION || known.usdcVersion,
    },
    settlement,
    facilitatorUrl: url('TRELLIS_FACILITATOR_URL', env.TRELLIS_FACILITATOR_URL) ?? defaultFacilitator,
    facilitatorAuth,
    allowChainChange: env.TRELLIS_ALLOW_CHAIN_CHANGE === '1',
    relayerKey,
    adminKey: env.TRELLIS_ADMIN_KEY || null,
    metricsAuth,
    statsRefreshS: integer('TRELLIS_STATS_REFRESH_S', env.TRELLIS_STATS_REFRESH_S, 60, 1, 86400 * 7),
    rankingsRefreshS: integer('TRELLIS_RANKINGS_REFRESH_S', env.TRELLIS_RANKINGS_REFRESH_S, 86400, 1, 86400 * 30),
    reconcileS: integer('TRELLIS_RECONCILE_S', env.TRELLIS_RECONCILE_S, 30, 1, 3600),
    ledgerCheckS: integer('TRELLIS_LEDGER_CHECK_S', env.TRELLIS_LEDGER_CHECK_S, 300, 1, 86400),
    confirmTimeoutS: integer('TRELLIS_CONFIRM_TIMEOUT_S', env.TRELLIS_CONFIRM_TIMEOUT_S, 30, 1, 600),
    logWindowBlocks: integer('TRELLIS_LOG_WINDOW_BLOCKS', env.TRELLIS_LOG_WINDOW_BLOCKS, 2000, 1, 1_000_000),
    rateLimit: oneOf('TRELLIS_RATE_LIMIT', env.TRELLIS_RATE_LIMIT, ['on', 'off'] as const, 'on') === 'on',
    trustProxy: oneOf('TRELLIS_TRUST_PROXY', env.TRELLIS_TRUST_PROXY, ['on', 'off'] as const, 'off') === 'on',
    log: oneOf('TRELLIS_LOG', env.TRELLIS_LOG, ['debug', 'info', 'warn', 'error'] as const, 'info'),
    allowPrivateFetch: hooks.allowed && env.TRELLIS_TEST_ALLOW_PRIVATE_FETCH === '1',
    clockOffsetS: hooks.allowed ? signedInteger('TRELLIS_TEST_CLOCK_OFFSET_S', env.TRELLIS_TEST_CLOCK_OFFSET_S) : 0,
    crashAfterSettle: hooks.allowed && env.TRELLIS_TEST_CRASH_AFTER_SETTLE === '1',
    testHooks: hooks,
  }
}
