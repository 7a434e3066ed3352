// The chains Trellis knows, one row each: adding a network is one row here. A row's chain id, label and public RPC
// endpoint are viem's chain definition; whether it is a mainnet, what settling one payment there typically costs,
// and its USDC (address and EIP-712 domain name and version, which a payment's signature commits to: a wrong one
// silently breaks every payment) are ours, each token with where its facts come from.
//
// The tokens: `@x402/evm` 2.27.0's DEFAULT_ASSETS (src/defaultAssets.ts of the x402 repository) for every EVM chain
// where it ships a USDC that moves by EIP-3009 transferWithAuthorization (the `exact` scheme's default: no
// `assetTransferMethod`); its stablecoins that are not USDC (USDT0, USD₮0, MegaUSD, mUSD, SBC) or move only by
// Permit2 are left out, since Trellis sells in one currency. Polygon Amoy and Avalanche Fuji, where @x402/evm ships
// none, from the `x402` 1.2.0 package (src/types/shared/evm/config.ts: address and name; its requirements say
// version "2"), the facts every v1 client signs with.
import type { Chain } from 'viem'
import {
  adi,
  arbitrum,
  arbitrumSepolia,
  avalanche,
  avalancheFuji,
  base,
  baseSepolia,
  celo,
  celoSepolia,
  hpp,
  hppSepolia,
  mainnet as ethereum,
  monad,
  polygon,
  polygonAmoy,
  sei,
  seiTestnet,
  sepolia,
  xdc,
  xdcTestnet,
} from 'viem/chains'

export interface TokenFacts {
  address: `0x${string}`
  /** The EIP-712 domain's name and version. */
  name: string
  version: string
  /** Where these facts were read. */
  source: 'x402-evm-2.27' | 'x402-1.2'
}

export interface ChainRow {
  chain: Chain
  mainnet: boolean
  /**
   * What settling one `exact` payment typically costs in gas, in USDC smallest units (1400 = 0.0014 USDC): a price below
   * it costs more to settle than it brings, so publishing one is warned about (domain/cheap-prices.ts). An estimate of
   * a figure that moves with gas and token prices, not a quote; a test network has its mainnet's, so that a creator
   * trying Trellis out sees the warning a live server would give.
   */
  typicalSettlementCost: bigint
  /** The USDC Trellis settles in; null: signing in only (no stablecoin whose facts are known). */
  usdc: TokenFacts | null
}

const x402Evm = (address: `0x${string}`, name: 'USD Coin' | 'USDC' | 'USDC.e' | 'Bridged USDC'): TokenFacts => ({
  address,
  name,
  version: '2',
  source: 'x402-evm-2.27',
})
const x402V1 = (address: `0x${string}`, name: string): TokenFacts => ({ address, name, version: '2', source: 'x402-1.2' })

// Typical settlement costs (docs/api.md "Cheap prices" says the same). Base: about $0.0014 of gas per `exact`
// settlement, from the x402 repository's ecosystem facts as recorded in the project's notes (x402-extensions.md).
// The others are our estimates, no measured source: an EIP-3009 transferWithAuthorization is about 80,000 gas.
// Ethereum: at 2 gwei and $3,000 per ETH, $0.48, and L1 gas often runs higher: $0.50. Polygon PoS: at 50 gwei and
// $0.50 per POL, $0.002; $0.003 leaves room for its spikes. Avalanche C-Chain: at 25 nAVAX and $25, $0.05, though
// its base fee is often far lower: $0.01. Arbitrum One: an L2 whose L1 data fee dominates, about $0.005. The other
// chains (Monad, Sei, Celo, XDC, ADI, HPP) charge fractions of a cent: $0.002, the order of magnitude, not a quote.
const COST = {
  base: 1_400n,
  ethereum: 500_000n,
  polygon: 3_000n,
  avalanche: 10_000n,
  arbitrum: 5_000n,
  cheap: 2_000n,
} as const

const row = <U extends TokenFacts | null>(chain: Chain, mainnet: boolean, typicalSettlementCost: bigint, usdc: U) => ({
  chain,
  mainnet,
  typicalSettlementCost,
  usdc,
})

export const CHAIN_TABLE = {
  base: row(base, true, COST.base, x402Evm('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin')),
  'base-sepolia': row(baseSepolia, false, COST.base, x402Evm('0x036CbD53842c5426634e7929541eC2318f3dCF7e', 'USDC')),
  ethereum: row(ethereum, true, COST.ethereum, x402Evm('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 'USD Coin')),
  // Signing in only: Circle's test USDC is known (a mainnet refuses it as its token) but @x402/evm ships no facts.
  'ethereum-sepolia': row(sepolia, false, COST.ethereum, null),
  polygon: row(polygon, true, COST.polygon, x402Evm('0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 'USD Coin')),
  'polygon-amoy': row(polygonAmoy, false, COST.polygon, x402V1('0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582', 'USDC')),
  arbitrum: row(arbitrum, true, COST.arbitrum, x402Evm('0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 'USD Coin')),
  'arbitrum-sepolia': row(arbitrumSepolia, false, COST.arbitrum, x402Evm('0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d', 'USD Coin')),
  avalanche: row(avalanche, true, COST.avalanche, x402Evm('0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 'USD Coin')),
  'avalanche-fuji': row(avalancheFuji, false, COST.avalanche, x402V1('0x5425890298aed601595a70AB815c96711a31Bc65', 'USD Coin')),
  monad: row(monad, true, COST.cheap, x402Evm('0x754704Bc059F8C67012fEd69BC8A327a5aafb603', 'USDC')),
  celo: row(celo, true, COST.cheap, x402Evm('0xcebA9300f2b948710d2653dD7B07f33A8B32118C', 'USDC')),
  'celo-sepolia': row(celoSepolia, false, COST.cheap, x402Evm('0x01C5C0122039549AD1493B8220cABEdD739BC44E', 'USDC')),
  sei: row(sei, true, COST.cheap, x402Evm('0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392', 'USDC')),
  'sei-testnet': row(seiTestnet, false, COST.cheap, x402Evm('0x4fCF1784B31630811181f670Aea7A7bEF803eaED', 'USDC')),
  xdc: row(xdc, true, COST.cheap, x402Evm('0xfA2958CB79b0491CC627c1557F441eF849Ca8eb1', 'USDC')),
  'xdc-apothem': row(xdcTestnet, false, COST.cheap, x402Evm('0xb5AB69F7bBada22B28e79C8FFAECe55eF1c771D4', 'USDC')),
  adi: row(adi, true, COST.cheap, x402Evm('0x9cb8142aEBBcdc60AF7c97Af897A67A8f3CA71C2', 'USDC.e')),
  hpp: row(hpp, true, COST.cheap, x402Evm('0x401eCb1D350407f13ba348573E5630B83638E30D', 'Bridged USDC')),
  'hpp-sepolia': row(hppSepolia, false, COST.cheap, x402Evm('0x401eCb1D350407f13ba348573E5630B83638E30D', 'Bridged USDC')),
} satisfies Record<string, ChainRow>

/** Test tokens of chains Trellis only signs in on: refused as a mainnet's token too (Circle's Ethereum Sepolia USDC). */
export const OTHER_TEST_TOKENS: readonly `0x${string}`[] = ['0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238']
