// A data directory belongs to one chain: the network, chain id and token its ledger was recorded on, written at its
// first start (or the first start after an upgrade, for directories made before this record existed). A start with
// other settings would list testnet sales as mainnet ones, and check the ledger against the wrong chain.
import type { MetaStore } from './meta.ts'

export interface ChainBinding {
  network: string
  chain_id: number
  token: string
}

const KEY = 'chain_binding'

const describe = (b: ChainBinding) => `${b.network} (chain ${b.chain_id}, token ${b.token})`
const same = (a: ChainBinding, b: ChainBinding) =>
  a.network === b.network && a.chain_id === b.chain_id && a.token.toLowerCase() === b.token.toLowerCase()

/** The chain this data directory was bound to, or null (made before the record existed, or never started). */
export async function recordedChain(meta: MetaStore): Promise<ChainBinding | null> {
  const value = await meta.get(KEY)
  return value === null ? null : (JSON.parse(value) as ChainBinding)
}

/** Why these records (`where`: "the data directory …", "the database …") cannot be used with `current`, in one line, or null. */
export async function chainMismatch(meta: MetaStore, where: string, current: ChainBinding): Promise<string | null> {
  const recorded = await recordedChain(meta)
  if (!recorded || same(recorded, current)) return null
  return (
    `${where} holds a ledger of ${describe(recorded)} but this start is for ${describe(current)}: ` +
    `start it with the settings it was made with, or set TRELLIS_ALLOW_CHAIN_CHANGE=1 to rebind it ` +
    `to the new chain (its ledger then holds sales of both)`
  )
}

/**
 * Binds the data directory to `current` when it has no binding yet; with `allowChange`, rebinds it. Returns what was
 * done (`rebound` carries the previous chain, for the warning); throws the mismatch otherwise.
 */
export async function bindChain(
  meta: MetaStore,
  where: string,
  current: ChainBinding,
  allowChange: boolean,
): Promise<{ kind: 'kept' | 'recorded' } | { kind: 'rebound'; previous: ChainBinding }> {
  const recorded = await recordedChain(meta)
  if (recorded && same(recorded, current)) return { kind: 'kept' }
  if (recorded && !allowChange) throw new Error((await chainMismatch(meta, where, current))!)
  await meta.set(KEY, JSON.stringify(current))
  return recorded ? { kind: 'rebound', previous: recorded } : { kind: 'recorded' }
}
