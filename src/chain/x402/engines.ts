// One payment engine per network sold on, found by the name a payment row or requirement gives.
import type { Config, NetworkSettings } from '../../config.ts'
import { chainReader, type ChainReader } from '../reader.ts'
import { watchedHttp } from '../rpc.ts'
import { paymentEngine, type PaymentEngine, type RelayerLock } from './engine.ts'

export interface PaymentEngines {
  /** In the order the networks are listed (the first is the server's first network). */
  all: readonly PaymentEngine[]
  /**
   * The engine of a network by its name; undefined for one not sold on. A row that names none (written by hand since
   * this start: each start names the others) is the first network's, as the start names them.
   */
  named(network: string | null): PaymentEngine | undefined
}

/**
 * `relayerLock`: settlements in process run on several instances with one relayer account. The first network's lock is
 * named as a one-network server always named it (instances of an older release share it in a rolling upgrade); each
 * other network's has its name appended, so that one relayer account settles on several chains side by side.
 */
export function paymentEngines(config: Config, relayerLock: RelayerLock | null = null): PaymentEngines {
  const all = config.networks.map((network, at) => {
    const lock: RelayerLock | null = relayerLock && at > 0 ? (name) => relayerLock(`${name}@${network.name}`) : relayerLock
    return paymentEngine(network, config, lock)
  })
  const byName = new Map(all.map((engine) => [engine.network.name as string, engine]))
  return { all, named: (network) => byName.get(network ?? all[0]!.network.name) }
}

/** A reader of each network's chain, without settling (verify-ledger's), found as the engines are. */
export function chainReaders(config: Config): {
  named(network: string | null): { chain: ChainReader; network: NetworkSettings } | undefined
} {
  const readers = new Map(
    config.networks.map((network) => {
      const chain = chainReader(watchedHttp(network.rpcUrl, 20_000), network.usdcAddress, { logWindow: BigInt(config.logWindowBlocks) })
      return [network.name as string, { chain, network }]
    }),
  )
  return { named: (network) => readers.get(network ?? config.network.name) }
}
