// The chains Trellis settles on, each with its USDC contract (name and version as its EIP-712 domain has them).
export const NETWORK_NAMES = ['base', 'base-sepolia'] as const
export type NetworkName = (typeof NETWORK_NAMES)[number]

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
