// A data directory belongs to its chains: the networks, chain ids and tokens its ledger was recorded on, written at
// its first start (or the first start after an upgrade, for directories made before this record existed). A start
// that drops one of them, or names another chain or token by one's name, would stop deciding that chain's pending
// payments and check its ledger rows against nothing (or list testnet sales as mainnet ones): refused. Adding a
// network is allowed: the ledger then holds sales of more chains, each row naming its own.
import type { MetaStore } from './meta.ts'

export interface ChainBinding {
  network: string
  chain_id: number
  token: string
}

const KEY = 'chain_binding'

const describe = (b: ChainBinding) => `${b.network} (chain ${b.chain_id}, token ${b.token})`
const describeAll = (bindings: readonly ChainBinding[]) => bindings.map(describe).join(', ')
const same = (a: ChainBinding, b: ChainBinding) =>
  a.network === b.network && a.chain_id === b.chain_id && a.token.toLowerCase() === b.token.toLowerCase()

/** The chains this data directory was bound to, in the order listed, or null (made before the record existed, or never started). */
export async function recordedChains(meta: MetaStore): Promise<ChainBinding[] | null> {
  const value = await meta.get(KEY)
  if (value === null) return null
  // One chain, as a one-network Trellis wrote it; or several.
  const parsed = JSON.parse(value) as ChainBinding | { networks: ChainBinding[] }
  return 'networks' in parsed ? parsed.networks : [parsed]
}

/** The recorded chains `current` does not carry as they were (dropped, or another chain or token under one's name). */
const missingFrom = (recorded: readonly ChainBinding[], current: readonly ChainBinding[]) =>
  recorded.filter((one) => !current.some((now) => same(one, now)))

/** Why these records (`where`: "the data directory …", "the database …") cannot be used with `current`, in one line, or null. */
export async function chainMismatch(meta: MetaStore, where: string, current: readonly ChainBinding[]): Promise<string | null> {
  const recorded = await recordedChains(meta)
  if (!recorded) return null
  const missing = missingFrom(recorded, current)
  if (missing.length === 0) return null
  return (
    `${where} holds a ledger of ${describeAll(recorded)} but this start is for ${describeAll(current)}, ` +
    `without ${describeAll(missing)}: start it with every network it was made with (more may be added), or set ` +
    `TRELLIS_ALLOW_CHAIN_CHANGE=1 to rebind it to the new chains (its ledger then holds sales of both)`
  )
}

export type Binding =
  | { kind: 'kept' | 'recorded' }
  /** Networks were added to those recorded. */
  | { kind: 'added'; added: ChainBinding[] }
  /** With the override: a recorded chain was dropped or changed. */
  | { kind: 'rebound'; previous: ChainBinding[] }

/**
 * Binds the data directory to `current` when it has no binding yet, or to more networks when `current` adds some;
 * with `allowChange`, rebinds it. Returns what was done; throws the mismatch otherwise.
 */
export async function bindChains(meta: MetaStore, where: string, current: readonly ChainBinding[], allowChange: boolean): Promise<Binding> {
  const recorded = await recordedChains(meta)
  const write = () => meta.set(KEY, JSON.stringify({ networks: current }))
  if (!recorded) {
    await write()
    return { kind: 'recorded' }
  }
  if (missingFrom(recorded, current).length > 0) {
    if (!allowChange) throw new Error((await chainMismatch(meta, where, current))!)
    await write()
    return { kind: 'rebound', previous: recorded }
  }
  const added = missingFrom(current, recorded)
  if (added.length === 0) return { kind: 'kept' }
  await write()
  return { kind: 'added', added }
}

/** The bindings of the networks a server is configured to sell on. */
export const bindingsOf = (networks: readonly { name: string; chainId: number; usdcAddress: string }[]): ChainBinding[] =>
  networks.map((network) => ({ network: network.name, chain_id: network.chainId, token: network.usdcAddress }))
