// The chains Trellis knows (config/chain-table.ts, one row each), as every place that asks reads them: the chain id
// and CAIP-2 id a network is written as, whether it is a mainnet (real money: a server settling there refuses test
// settings, see chain/mainnet.ts), its USDC. Trellis settles on NETWORK_NAMES (the chains with a USDC whose facts are
// known); a wallet may say in x-chain-id that it signed on any chain here.
import { CHAIN_TABLE, OTHER_TEST_TOKENS, type ChainRow } from './chain-table.ts'

type ChainName = keyof typeof CHAIN_TABLE
type SettledName<N extends ChainName> = (typeof CHAIN_TABLE)[N]['usdc'] extends null ? never : N

/** The networks a server can settle on. */
export type NetworkName = { [N in ChainName]: SettledName<N> }[ChainName]
export const NETWORK_NAMES = (Object.keys(CHAIN_TABLE) as ChainName[]).filter((name) => CHAIN_TABLE[name].usdc !== null) as NetworkName[]

export interface ChainFacts {
  name: string
  chainId: number
  /** How x402 v2 and facilitators name it. */
  caip2: `eip155:${number}`
  /** Real money moves here: test tokens and testnet-only facilitators are refused. */
  mainnet: boolean
  /** Its USDC contract, where Trellis knows one. */
  usdc: `0x${string}` | null
  /** See ChainRow.typicalSettlementCost. */
  typicalSettlementCost: bigint
}

const factsOf = (name: string, row: ChainRow): ChainFacts => ({
  name,
  chainId: row.chain.id,
  caip2: `eip155:${row.chain.id}`,
  mainnet: row.mainnet,
  usdc: row.usdc?.address ?? null,
  typicalSettlementCost: row.typicalSettlementCost,
})

export const CHAINS = Object.fromEntries(Object.entries(CHAIN_TABLE).map(([name, row]) => [name, factsOf(name, row)])) as Record<
  ChainName,
  ChainFacts
>

/** The chain of an x-chain-id value (decimal chain id); undefined for a chain not in CHAINS. */
const CHAINS_BY_ID = new Map(Object.values(CHAINS).map((facts) => [String(facts.chainId), facts]))
export const chainOfId = (chainId: string): ChainFacts | undefined => CHAINS_BY_ID.get(chainId)

/** The chain of a network name; undefined for a name not in CHAINS. */
export const chainNamed = (name: string): ChainFacts | undefined => (Object.hasOwn(CHAINS, name) ? CHAINS[name as ChainName] : undefined)

/** The settled network of a name as x402 v1 writes it or a CAIP-2 id as v2 does; null for any other. */
export const networkNamed = (named: unknown): NetworkName | null =>
  NETWORK_NAMES.find((name) => named === name || named === CHAINS[name].caip2) ?? null

const MAINNET_TOKENS = new Set(Object.values(CHAINS).flatMap((f) => (f.mainnet && f.usdc ? [f.usdc.toLowerCase()] : [])))

/**
 * Token contracts that exist on test networks only (Circle's test USDC and the like): refused as the token of a
 * mainnet. An address that is also a mainnet's USDC (HPP's bridged USDC has one address on both) is not one.
 */
export const TEST_TOKENS: readonly `0x${string}`[] = [
  ...Object.values(CHAINS).flatMap((facts) => (!facts.mainnet && facts.usdc ? [facts.usdc] : [])),
  ...OTHER_TEST_TOKENS,
].filter((token) => !MAINNET_TOKENS.has(token.toLowerCase()))

export interface NetworkInfo {
  name: NetworkName
  chainId: number
  caip2: ChainFacts['caip2']
  mainnet: boolean
  /** A short name for people ("Base"). */
  label: string
  rpcUrl: string
  /** True when the network's RPC URL was given: only then do signatures fall back to ERC-1271 calls. */
  rpcConfigured: boolean
  usdcAddress: `0x${string}`
  /** USDC's EIP-712 domain name and version on this chain. */
  usdcName: string
  usdcVersion: string
  /** See ChainRow.typicalSettlementCost. */
  typicalSettlementCost: bigint
}

const settledOn = (name: NetworkName): Omit<NetworkInfo, 'rpcConfigured'> => {
  const row: ChainRow = CHAIN_TABLE[name]
  const { chainId, caip2, mainnet, typicalSettlementCost } = CHAINS[name]
  const usdc = row.usdc!
  return {
    name,
    chainId,
    caip2,
    mainnet,
    label: row.chain.name.replaceAll('_', ' '),
    rpcUrl: row.chain.rpcUrls.default.http[0]!,
    usdcAddress: usdc.address,
    usdcName: usdc.name,
    usdcVersion: usdc.version,
    typicalSettlementCost,
  }
}

export const NETWORKS = Object.fromEntries(NETWORK_NAMES.map((name) => [name, settledOn(name)])) as Record<
  NetworkName,
  Omit<NetworkInfo, 'rpcConfigured'>
>

/** The networks settled on that move no real money: where to try Trellis out. */
export const TEST_NETWORKS = NETWORK_NAMES.filter((name) => !NETWORKS[name].mainnet)

/** How a network's own variables are named: TRELLIS_RPC_URL_POLYGON_AMOY for polygon-amoy. */
export const networkSuffix = (name: string): string => name.toUpperCase().replaceAll('-', '_')
