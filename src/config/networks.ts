// The chains Trellis knows, one row of facts each, read by every place that asks: the chain id and CAIP-2 id a
// network is written as, whether it is a mainnet (real money: a server settling there refuses test settings, see
// chain/mainnet.ts), and its USDC contract where Trellis knows one (on a test network, a test token). Trellis settles
// on NETWORK_NAMES; a wallet may say in x-chain-id that it signed on any chain here.
export const NETWORK_NAMES = ['base', 'base-sepolia'] as const
export type NetworkName = (typeof NETWORK_NAMES)[number]

export interface ChainFacts {
  name: string
  chainId: number
  /** How x402 v2 and facilitators name it. */
  caip2: `eip155:${number}`
  /** Real money moves here: test tokens and testnet-only facilitators are refused. */
  mainnet: boolean
  /** Its USDC contract, where Trellis knows one. */
  usdc: `0x${string}` | null
  /**
   * What settling one `exact` payment typically costs in gas, in USDC smallest units (1400 = 0.0014 USDC): a price below
   * it costs more to settle than it brings, so publishing one is warned about (domain/cheap-prices.ts). An estimate of
   * a figure that moves with gas and token prices, not a quote; a test network has its mainnet's, so that a creator
   * trying Trellis out sees the warning a live server would give.
   */
  typicalSettlementCost: bigint
}

const chain = (
  name: string,
  chainId: number,
  mainnet: boolean,
  typicalSettlementCost: bigint,
  usdc: `0x${string}` | null = null,
): ChainFacts => ({ name, chainId, caip2: `eip155:${chainId}`, mainnet, usdc, typicalSettlementCost })

// Typical settlement costs (see ChainFacts.typicalSettlementCost; docs/api.md "Cheap prices" says the same):
// - Base: about $0.0014 of gas per `exact` settlement, from the x402 repository's ecosystem facts as recorded in the
//   project's notes (x402-extensions.md: "gas per `exact` settlement is about $0.0014, more than a $0.001 price").
// - Ethereum mainnet: our estimate, no measured source: an EIP-3009 transferWithAuthorization is about 80,000 gas;
//   at 2 gwei and $3,000 per ETH that is $0.48, and L1 gas prices often run higher. $0.50, rounded up.
// - Polygon PoS: our estimate the same way: 80,000 gas at 50 gwei and $0.50 per POL is $0.002; $0.003 leaves room
//   for Polygon's frequent gas spikes.
const BASE_SETTLEMENT = 1_400n
const ETHEREUM_SETTLEMENT = 500_000n
const POLYGON_SETTLEMENT = 3_000n

export const CHAINS = {
  base: chain('base', 8453, true, BASE_SETTLEMENT, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  'base-sepolia': chain('base-sepolia', 84532, false, BASE_SETTLEMENT, '0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
  ethereum: chain('ethereum', 1, true, ETHEREUM_SETTLEMENT),
  'ethereum-sepolia': chain('ethereum-sepolia', 11155111, false, ETHEREUM_SETTLEMENT, '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238'),
  polygon: chain('polygon', 137, true, POLYGON_SETTLEMENT),
  'polygon-amoy': chain('polygon-amoy', 80002, false, POLYGON_SETTLEMENT),
} satisfies Record<string, ChainFacts>

/** The chain of an x-chain-id value (decimal chain id); undefined for a chain not in CHAINS. */
const CHAINS_BY_ID = new Map(Object.values(CHAINS).map((facts) => [String(facts.chainId), facts]))
export const chainOfId = (chainId: string): ChainFacts | undefined => CHAINS_BY_ID.get(chainId)

/** The chain of a network name; undefined for a name not in CHAINS. */
export const chainNamed = (name: string): ChainFacts | undefined =>
  Object.hasOwn(CHAINS, name) ? CHAINS[name as keyof typeof CHAINS] : undefined

/** Token contracts that exist on test networks only (Circle's test USDC): refused as the token of a mainnet. */
export const TEST_TOKENS: readonly `0x${string}`[] = Object.values(CHAINS).flatMap((facts) =>
  !facts.mainnet && facts.usdc ? [facts.usdc] : [],
)

export interface NetworkInfo {
  name: NetworkName
  chainId: number
  caip2: ChainFacts['caip2']
  mainnet: boolean
  /** A short name for people ("Base"). */
  label: string
  rpcUrl: string
  /** True when TRELLIS_RPC_URL was given: only then do signatures fall back to ERC-1271 calls. */
  rpcConfigured: boolean
  usdcAddress: `0x${string}`
  /** USDC's EIP-712 domain name and version on this chain. */
  usdcName: string
  usdcVersion: string
  /** See ChainFacts.typicalSettlementCost. */
  typicalSettlementCost: bigint
}

const settledOn = (
  name: NetworkName,
  facts: { label: string; rpcUrl: string; usdcName: string; usdcVersion: string },
): Omit<NetworkInfo, 'rpcConfigured'> => {
  const { chainId, caip2, mainnet, usdc, typicalSettlementCost } = CHAINS[name]
  return { name, chainId, caip2, mainnet, usdcAddress: usdc!, typicalSettlementCost, ...facts }
}

export const NETWORKS: Record<NetworkName, Omit<NetworkInfo, 'rpcConfigured'>> = {
  base: settledOn('base', { label: 'Base', rpcUrl: 'https://mainnet.base.org', usdcName: 'USD Coin', usdcVersion: '2' }),
  'base-sepolia': settledOn('base-sepolia', {
    label: 'Base Sepolia',
    rpcUrl: 'https://sepolia.base.org',
    usdcName: 'USDC',
    usdcVersion: '2',
  }),
}

/** The networks settled on that move no real money: where to try Trellis out. */
export const TEST_NETWORKS = NETWORK_NAMES.filter((name) => !NETWORKS[name].mainnet)
