// How x402 names our network: v1 by its name (v1 clients refuse anything else), v2 and the facilitator by its
// CAIP-2 id (the network table's, config/networks.ts).
import type { NetworkInfo } from '../../config.ts'

export type WireVersion = 1 | 2

export const caip2 = (network: Pick<NetworkInfo, 'caip2'>) => network.caip2

export const networkOnWire = (network: Pick<NetworkInfo, 'name' | 'caip2'>, version: WireVersion): string =>
  version === 2 ? caip2(network) : network.name
