// What the chain says of an authorization this process signed and sent (EIP-3009's authorizationState): the only
// proof that one the server kept but did not settle can no longer move money. Asked only of the RPC the operator
// named for that network (TRELLIS_MCP_RPC_URL…), and only believed when that RPC is on the network's chain.
import { createPublicClient, http, parseAbi } from 'viem'
import { NETWORKS, type NetworkName } from '../config/networks.ts'
import type { AuthorizationCheck } from './spending.ts'

const EIP3009 = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)'])

export function authorizationCheck(rpcUrls: Partial<Record<NetworkName, string>>): AuthorizationCheck {
  const clients = new Map<NetworkName, ReturnType<typeof createPublicClient>>()
  const clientOf = (network: NetworkName) => {
    const url = rpcUrls[network]
    if (!url) return null
    if (!clients.has(network)) clients.set(network, createPublicClient({ transport: http(url, { timeout: 10_000, retryCount: 0 }) }))
    return clients.get(network)!
  }
  return async (sent) => {
    const client = clientOf(sent.network)
    if (!client) return 'unknown' // no chain to ask: it stays spent
    if ((await client.getChainId()) !== NETWORKS[sent.network].chainId) return 'unknown'
    // The state AT a block whose time is validBefore or later: unused there, no later block can use it (EIP-3009
    // needs block.timestamp < validBefore).
    const block = await client.getBlock({ blockTag: 'latest' })
    const used = await client.readContract({
      address: sent.asset,
      abi: EIP3009,
      functionName: 'authorizationState',
      args: [sent.from, sent.nonce],
      blockNumber: block.number,
    })
    if (used) return 'used'
    return block.timestamp >= sent.validBefore ? 'expired-unused' : 'unknown'
  }
}
