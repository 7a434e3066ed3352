// The command line's words: the options every command takes (but help and version), the commands on a data
// directory, and the help that lists them. Each option stands for an environment variable, and a flag wins over it
// (command-line.ts). One row of FLAGS is the whole of an option: its flag, its variable, how its value is read, its
// line in the help and (by its key) its field in Config.
import { NETWORK_NAMES } from './networks.ts'
import {
  bindHost,
  contentPlace,
  integer,
  oneOf,
  optionalText,
  postgresUrl,
  postgresUrls,
  text,
  url,
  type Setting,
  type ValuesOf,
} from './values.ts'
import { MCP_HELP } from './mcp.ts'

interface Flag<T> extends Setting<T> {
  /** As typed, without its dashes. */
  flag: string
  /** What stands for its value in the help. */
  value: string
  help: string
}

export const FLAGS = {
  host: {
    flag: 'host',
    value: '<addr>',
    variable: 'TRELLIS_HOST',
    read: bindHost,
    help: 'bind address: an IP address or a host name (default 127.0.0.1)',
  },
  port: {
    flag: 'port',
    value: '<n>',
    variable: 'TRELLIS_PORT',
    read: integer(8402, 0, 65535),
    help: 'port, 0 = any free port (default 8402)',
  },
  dataDir: {
    flag: 'data-dir',
    value: '<path>',
    variable: 'TRELLIS_DATA_DIR',
    read: text('./trellis-data'),
    help: 'everything persistent (default ./trellis-data); with a database URL, caches only',
  },
  /** null: derived from the bound address once listening. */
  publicUrl: {
    flag: 'public-url',
    value: '<url>',
    variable: 'TRELLIS_PUBLIC_URL',
    read: url,
    help: 'base of access_url and x402 resource (default http://<host>:<port>)',
  },
  /** null: the embedded database (<data-dir>/trellis.db). */
  databaseUrl: {
    flag: 'database-url',
    value: '<url>',
    variable: 'TRELLIS_DATABASE_URL',
    read: postgresUrl,
    help: 'records (and by default content) in PostgreSQL ≥ 15 (default: embedded in the data dir)',
  },
  /** null: the database URL is direct (a transaction pooler there is refused at start: postgres/pooler.ts). */
  databaseDirectUrl: {
    flag: 'database-direct-url',
    value: '<url>',
    variable: 'TRELLIS_DATABASE_DIRECT_URL',
    read: postgresUrl,
    help: 'the same database without a pooler, when --database-url goes through one (PgBouncer): for LISTEN and leases',
  },
  /** Empty: every read goes to the database URL (postgres/replicas.ts). */
  databaseReplicaUrls: {
    flag: 'database-replica-url',
    value: '<url,…>',
    variable: 'TRELLIS_DATABASE_REPLICA_URL',
    read: postgresUrls,
    help: 'streaming replicas of that database (comma-separated): lists, boards and statistics are read there',
  },
  /** null: the default for where the records are (environment.ts, contentFrom). */
  contentUrl: {
    flag: 'content-url',
    value: '<where>',
    variable: 'TRELLIS_CONTENT_URL',
    read: contentPlace,
    help:
      "content blocks: leveldb (in the data dir) | postgres (the records' database; the default with " +
      'a database URL) | s3://bucket/prefix?endpoint=…&region=… (an S3-compatible bucket, indexed in ' +
      "the records' database)",
  },
  /** The one network sold on; read with TRELLIS_NETWORKS by config/network-settings.ts. */
  network: {
    flag: 'network',
    value: '<name>',
    variable: 'TRELLIS_NETWORK',
    read: oneOf(NETWORK_NAMES, 'base-sepolia'),
    help: 'the network to sell on, e.g. base | base-sepolia (default base-sepolia)',
  },
  /** null: TRELLIS_NETWORK's one. */
  networks: {
    flag: 'networks',
    value: '<a,b,…>',
    variable: 'TRELLIS_NETWORKS',
    read: optionalText,
    help: 'several networks to sell on at once, e.g. base,polygon,arbitrum (the first is --network)',
  },
} satisfies Record<string, Flag<unknown>>

export type FlagValues = ValuesOf<typeof FLAGS>

/** The commands on a data directory (src/ops). */
export const DATA_COMMANDS = [
  'backup',
  'restore',
  'export-car',
  'import-car',
  'verify',
  'gc',
  'migrate-to-postgres',
  'takedown',
  'reinstate',
  'takedowns',
] as const
export type DataCommand = (typeof DATA_COMMANDS)[number]

// A name or variable longer than its column still keeps a space before the next.
const option = (name: string, variable: string, help: string) => `  ${`${name} `.padEnd(21)}${`${variable} `.padEnd(22)}${help}`
const OPTIONS = [
  ...Object.values(FLAGS).map((row) => option(`--${row.flag} ${row.value}`, row.variable, row.help)),
  option('-h, --help', '', 'show this help'),
  option('-v, --version', '', 'print the version, commit and build date'),
].join('\n')

export const HELP = `trellis — self-hosted content-feed marketplace server

Usage: trellis [serve] [options]
       trellis verify-ledger [options]   check every ledger row against its on-chain transfer, every failed
                                         payment against the chain, and the totals against the ledger
                                         (exit 0: the ledger equals the chain; 1: a mismatch, listed as JSON;
                                         2: the database cannot be used; 3: the chain could not be read)
       trellis backup <dir> [options]    a consistent backup (database, content as a CAR file, key) into a
                                         new or empty directory; a running server makes it while it serves
       trellis restore <dir> [options]   a backup into a new or empty data directory (the server stopped), or
                                         with --database-url into a PostgreSQL database that holds no market yet
       trellis verify [options]          the database is sound, every entry's and cover's blocks are present
                                         and hash to their CIDs, the totals equal the ledger (exit 0 / 1)
       trellis healthcheck [options]     exit 0 when the server on --host/--port answers /health (for containers)
       trellis export-car <cid>... --out <file.car> [options]    items as a CAR file
       trellis import-car <file.car> [options]                  blocks of a CAR file into the content store
       trellis gc [--dry-run] [options]  removes content no entry or cover names (left by failed uploads, or
                                         imported and never used); a running server does it while it serves
       trellis migrate-to-postgres --database-url <url> [options]
                                         moves the data directory's records, content and key into that
                                         PostgreSQL (which holds no market yet), then verifies them there;
                                         the data directory is left as it was (its server stopped)
       trellis takedown feed|entry <id> --reason <why> [options]
                                         hides a feed or an entry everywhere and refuses its content (451);
                                         its sales stay in the ledger (as POST /v1/admin/…/takedown)
       trellis reinstate feed|entry <id> [--reason <why>] [options]    gives it back as its owner had it
       trellis takedowns [--state standing|reinstated|all] [options]   the takedowns and their reasons
       trellis mcp [--url <url>]         an MCP server for AI agents over stdio (see below)
       trellis version                   the version, the commit and the build date (same as --version)
       trellis help                      this help (same as --help)

Options of export-car and gc only: --out <file.car> (export-car), --dry-run (gc: list, remove nothing).
Option of restore (into PostgreSQL) and migrate-to-postgres only: --replace-nul stores each NUL (U+0000) of text an
older Trellis kept, which PostgreSQL cannot hold, as U+FFFD; without it such text refuses the move, naming each value.
An unknown option, a missing value or a bad one stops with one line naming it (exit 2).

Options of every command (flag = environment variable; flags win):
${OPTIONS}

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
  TRELLIS_LOG (debug|info|warn|error),
  TRELLIS_DB_POOL (10: connections to PostgreSQL), TRELLIS_READ_MEMO_MB (32: read results kept; 0: none),
  TRELLIS_GC_GRACE_S (86400: content in PostgreSQL stored more recently is never collected),
  TRELLIS_LEADER_POLL_S (2: seconds, fractions allowed, between tries to lead the once-per-database jobs, PostgreSQL),
  TRELLIS_REPLICA_MAX_LAG_S (5: a read replica further behind, or out of reach, is not read until it catches up),
  TRELLIS_WEBHOOKS_ALLOW_LOCAL (1: webhooks to http and loopback/private hosts; a server on loopback only, for development),
  OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (traces over OTLP/HTTP JSON; unset: off), with
  OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER (otlp|none)

trellis mcp (takes --url and the environment below, none of the options above):
${MCP_HELP}

Test hooks (TRELLIS_TEST_*) work only from source with TRELLIS_TEST_HOOKS=1; the executable ignores them.
`
