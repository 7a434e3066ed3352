// Long reads run on a thread of their own, over a read-only connection of their own, so none ever holds the event
// loop: the leaderboards and wallet ranks, the SQL checks of the ledger, and for the data commands a backup's copy,
// the integrity check and the content the records name. This is the server's side; long-reads-worker.ts the thread's.
import type { BoardKey } from '../domain/leaderboards.ts'
import type { WalletRanks } from '../store/stats.ts'
import type { Inconsistency } from '../store/ledger-audit.ts'
import { workerClient } from '../lib/workers.ts'
import type { RecordsPlace } from '../store/open.ts'

export interface LongReadsAsked {
  boards?: boolean
  ranks?: boolean
  checks?: boolean
  /** A consistent copy of the database written here. */
  copyTo?: string
  integrity?: boolean
  namedCids?: boolean
}
export interface LongReadsRequest extends LongReadsAsked {
  id: number
  place: RecordsPlace
  now: number
}
export interface LongReadsResult {
  id: number
  ms: number
  problems?: Inconsistency[]
  integrity?: { problems: string[]; skipped?: string }
  cids?: string[]
  /** Built and published: each with the generation the shelf gave it. */
  boards?: Partial<Record<BoardKey, string[]>>
  boardsGeneration?: number
  ranks?: WalletRanks[]
  ranksGeneration?: number
  error?: string
}

/** The bodies of the snapshots published: each leaderboard's items already serialised, and the wallet ranks. */
export interface BoardsSnapshot {
  generated_at: number
  boards: Partial<Record<BoardKey, string[]>>
}
export interface RanksSnapshot {
  generated_at: number
  ranks: WalletRanks[]
}

export interface LongReads {
  run(what: LongReadsAsked, now: number): Promise<LongReadsResult>
  /** The thread closes its connection first, so SQLite can clean up its WAL files. */
  stop(): Promise<void>
}

/** A thread over its own read-only connection to the records at `place`. */
export function longReads(place: RecordsPlace): LongReads {
  const client = workerClient<Omit<LongReadsRequest, 'id'>, LongReadsResult>('jobs/long-reads-worker.ts')
  return {
    async run(what, now) {
      const result = await client.request({ place, now, ...what })
      if (result.error !== undefined) throw new Error(result.error)
      return result
    },
    stop: () => client.stop(),
  }
}
