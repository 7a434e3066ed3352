// What `trellis mcp` reads: the Trellis server it speaks to, and the operator's wallet with its spending caps. The
// key comes from the environment only (a flag would show in `ps` and in shell history), and no refusal repeats it.
import { ConfigError, read, url, type Environment, type Reader } from './values.ts'
import { NETWORK_NAMES, type NetworkName } from './networks.ts'

/** 0.10 USDC: one purchase larger than this needs the operator to raise TRELLIS_MCP_MAX_PER_CALL. */
export const DEFAULT_MAX_PER_CALL = 100_000n
/** 1 USDC: what one MCP process (one agent session) may spend in all, unless TRELLIS_MCP_MAX_PER_SESSION says more. */
export const DEFAULT_MAX_PER_SESSION = 1_000_000n
export const DEFAULT_MCP_URL = 'http://127.0.0.1:8402'

export const MCP_VARIABLES = {
  url: 'TRELLIS_MCP_URL',
  walletKey: 'TRELLIS_MCP_WALLET_KEY',
  maxPerCall: 'TRELLIS_MCP_MAX_PER_CALL',
  maxPerSession: 'TRELLIS_MCP_MAX_PER_SESSION',
  networks: 'TRELLIS_MCP_NETWORKS',
  rpcUrl: 'TRELLIS_MCP_RPC_URL',
} as const

export interface McpOptions {
  /** The Trellis server's base URL, without a trailing slash. */
  url: string
  /** The operator's private key, or null: the tools that pay or sign are not offered. */
  walletKey: `0x${string}` | null
  /** USDC smallest units. */
  maxPerCall: bigint
  maxPerSession: bigint
  /** The only networks a payment may be signed for; null: the one the server names at the first payment, kept. */
  networks: NetworkName[] | null
  /** A JSON-RPC URL per network, to learn from the chain when a sent but unsettled authorization can no longer move. */
  rpcUrls: Partial<Record<NetworkName, string>>
}

/** A private key: 0x and 64 hex digits. The message never holds the value. */
const privateKey: Reader<`0x${string}` | null> = (name, raw) => {
  if (raw === undefined || raw === '') return null
  if (!/^0x[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError(`${name} must be 0x followed by 64 hex characters (a private key)`)
  return raw as `0x${string}`
}

/** An amount in USDC smallest units, as digits (never a float: 1000000 = 1 USDC). */
const units =
  (fallback: bigint): Reader<bigint> =>
  (name, raw) => {
    if (raw === undefined || raw === '') return fallback
    if (!/^\d{1,30}$/.test(raw))
      throw new ConfigError(`${name} must be a whole number of USDC smallest units (1000000 = 1 USDC), got "${raw}"`)
    return BigInt(raw)
  }

const networkList: Reader<NetworkName[] | null> = (name, raw) => {
  if (raw === undefined || raw.trim() === '') return null
  const names = raw
    .split(',')
    .map((one) => one.trim())
    .filter((one) => one !== '')
  const unknown = names.find((one) => !(NETWORK_NAMES as readonly string[]).includes(one))
  if (unknown !== undefined) throw new ConfigError(`${name} names "${unknown}"; known networks: ${NETWORK_NAMES.join(', ')}`)
  return [...new Set(names)] as NetworkName[]
}

/** TRELLIS_MCP_RPC_URL for the first network pinned (or any, when one is), TRELLIS_MCP_RPC_URL_<NETWORK> for each. */
function rpcUrlsFrom(env: Environment, networks: NetworkName[] | null): Partial<Record<NetworkName, string>> {
  const urls: Partial<Record<NetworkName, string>> = {}
  for (const network of NETWORK_NAMES) {
    const given = read(env, `${MCP_VARIABLES.rpcUrl}_${network.toUpperCase().replaceAll('-', '_')}`, url)
    if (given) urls[network] = given
  }
  const plain = read(env, MCP_VARIABLES.rpcUrl, url)
  if (plain) for (const network of networks ? networks.slice(0, 1) : NETWORK_NAMES) urls[network] ??= plain
  return urls
}

/** `env` holds TRELLIS_MCP_URL as the --url flag set it, when it did (command-line.ts names the flag in a refusal). */
export function mcpOptionsFrom(env: Environment): McpOptions {
  const networks = read(env, MCP_VARIABLES.networks, networkList)
  return {
    url: read(env, MCP_VARIABLES.url, url) ?? DEFAULT_MCP_URL,
    walletKey: read(env, MCP_VARIABLES.walletKey, privateKey),
    maxPerCall: read(env, MCP_VARIABLES.maxPerCall, units(DEFAULT_MAX_PER_CALL)),
    maxPerSession: read(env, MCP_VARIABLES.maxPerSession, units(DEFAULT_MAX_PER_SESSION)),
    networks,
    rpcUrls: rpcUrlsFrom(env, networks),
  }
}

const row = (name: string, help: string) => `  ${name.padEnd(37)}${help}`
export const MCP_HELP = [
  'an MCP server for AI agents on stdin/stdout, speaking to the Trellis server at --url over HTTP; it opens no data',
  'directory. Every server serves the same reading tools, without a wallet, over Streamable HTTP at /mcp.',
  row(`--url <url>, ${MCP_VARIABLES.url}`, `the Trellis server (default ${DEFAULT_MCP_URL})`),
  row(MCP_VARIABLES.walletKey, "the operator's wallet (0x + 64 hex; environment only, never a flag): adds the"),
  row('', 'tools that buy (x402, USDC) and publish; the key signs here and is never sent'),
  row(MCP_VARIABLES.maxPerCall, `most one purchase may cost, USDC smallest units (default ${DEFAULT_MAX_PER_CALL} = 0.10 USDC)`),
  row(MCP_VARIABLES.maxPerSession, `most this process may spend in all (default ${DEFAULT_MAX_PER_SESSION} = 1 USDC)`),
  row(MCP_VARIABLES.networks, `the only networks paid on, e.g. base-sepolia (default: the server's, as it first says)`),
  row(`${MCP_VARIABLES.rpcUrl}[_<NETWORK>]`, 'a JSON-RPC URL of the chain: an authorization the server kept but did not'),
  row('', 'settle is given back to the session cap once the chain shows it expired unused'),
].join('\n')
