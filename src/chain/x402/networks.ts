// How x402 names our network: v1 by its name (v1 clients refuse anything else), v2 and the facilitator by its
// CAIP-2 id. The only place that builds a CAIP-2 id.
import type { NetworkInfo } from '../../config.ts'

export type WireVersion = 1 | 2

export const caip2 = (network: Pick<NetworkInfo, 'chainId'>) => `eip155:${network.chainId}` as const

export const networkOnWire = (network: Pick<NetworkInfo, 'name' | 'chainId'>, version: WireVersion): string =>
  version === 2 ? caip2(network) : network.name
