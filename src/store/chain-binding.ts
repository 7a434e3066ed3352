// A data directory belongs to one chain: the network, chain id and token its ledger was recorded on, written at its
// first start (or the first start after an upgrade, for directories made before this record existed). A start with
// other settings would list testnet sales as mainnet ones, and check the ledger against the wrong chain.
import type { Db } from './db.ts'

export interface ChainBinding {
  network: string
  chain_id: number
  token: string
}

const KEY = 'chain_binding'

const describe = (b: ChainBinding) => `${b.network} (chain ${b.chain_id}, token ${b.token})`
const same = (a: ChainBinding, b: ChainBinding) => a.network === b.network && a.chain_id === b.chain_id && a.token.toLowerCase() === b.token.toLowerCase()

/** The chain this data directory was bound to, or null (made before the record existed, or never started). */
export function recordedChain(db: Db): ChainBinding | null {
  const row = db.query<{ value: string }, [string]>('SELECT value FROM meta WHERE key = ?').get(KEY)
  return row ? (JSON.parse(row.value) as ChainBinding) : null
}

/** Why this data directory cannot be used with `current`, in one line, or null when it can. */
export function chainMismatch(db: Db, dataDir: string, current: ChainBinding): string | null {
  const recorded = recordedChain(db)
  if (!recorded || same(recorded, current)) return null
  return `the data directory ${dataDir} holds a ledger of ${describe(recorded)} but this start is for ${describe(current)}: start it with the settings it was made with, or set TRELLIS_ALLOW_CHAIN_CHANGE=1 to rebind it to the new chain (its ledger then holds sales of both)`
}

/**
 * Binds the data directory to `current` when it has no binding yet; with `allowChange`, rebinds it. Returns what was
 * done (`rebound` carries the previous chain, for the warning); throws the mismatch otherwise.
 */
export function bindChain(db: Db, dataDir: string, current: ChainBinding, allowChange: boolean): { kind: 'kept' | 'recorded' } | { kind: 'rebound'; previous: ChainBinding } {
  const recorded = recordedChain(db)
  if (recorded && same(recorded, current)) return { kind: 'kept' }
  if (recorded && !allowChange) throw new Error(chainMismatch(db, dataDir, current)!)
  db.query('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(KEY, JSON.stringify(current))
  return recorded ? { kind: 'rebound', previous: recorded } : { kind: 'recorded' }
}
