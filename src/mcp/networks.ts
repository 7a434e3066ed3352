// The networks `trellis mcp` will sign payments for. The operator names them (TRELLIS_MCP_NETWORKS); without that, the
// network the server names at the first payment (its /.well-known/x402) is kept for the whole session: a server that
// said testnet cannot later ask the same key for mainnet USDC, whatever its 402s say.
import { NETWORK_NAMES, networkNamed, NETWORKS, type NetworkName } from '../config/networks.ts'
import type { TrellisApi } from './api.ts'

/** Our name of a requirement's network, as x402 v2 (its CAIP-2 id in the network table) or v1 (a name) writes it; else null. */
export { networkNamed }

export class PinnedNetworks {
  #pinned: Promise<readonly NetworkName[]> | null

  constructor(
    private readonly api: TrellisApi,
    given: readonly NetworkName[] | null,
  ) {
    this.#pinned = given ? Promise.resolve(given) : null
  }

  /** The networks paid on; the server's own is asked once (a failed ask is asked again, never guessed). */
  names(): Promise<readonly NetworkName[]> {
    this.#pinned ??= this.#askServer().catch((error: unknown) => {
      this.#pinned = null
      throw error
    })
    return this.#pinned
  }

  async #askServer(): Promise<readonly NetworkName[]> {
    const about = await this.api.json<{ network?: unknown; networks?: unknown }>('/.well-known/x402')
    const named = Array.isArray(about.networks) ? about.networks : [about.network]
    const known = named.map(networkNamed).filter((name): name is NetworkName => name !== null)
    if (known.length === 0)
      throw new Error(`the server names no network this client knows (${NETWORK_NAMES.join(', ')}); set TRELLIS_MCP_NETWORKS`)
    // A Trellis server never sells on both: a list that mixes them is no server's own, and real USDC is not risked on it.
    if (new Set(known.map((name) => NETWORKS[name].mainnet)).size > 1)
      throw new Error(`the server names mainnets and testnets together (${known.join(', ')}); set TRELLIS_MCP_NETWORKS`)
    return [...new Set(known)]
  }

  /** The chain ids a sign-in message may name. */
  async chainIds(): Promise<number[]> {
    return (await this.names()).map((name) => NETWORKS[name].chainId)
  }
}
