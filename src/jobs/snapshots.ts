// The leaderboards and ranks every instance serves: those the leader built last. The leader installs what its thread
// built and published; every instance loads the newest from the shelf at start and whenever the cluster says a
// newer one is up, so all serve the same bytes. A generation is installed once, and never an older one after it.
import type { Logger } from '../log.ts'
import type { SnapshotKind } from '../store/records.ts'
import type { Records } from '../store/stores.ts'
import type { StatsService } from '../domain/stats-service.ts'
import type { BoardsSnapshot, RanksSnapshot } from './long-reads.ts'

export interface SnapshotFollower {
  /** The leader's own build: installed unless a newer generation already is. */
  built(kind: 'boards', generation: number, boards: BoardsSnapshot['boards']): void
  built(kind: 'ranks', generation: number, ranks: RanksSnapshot['ranks']): void
  stop(): void
}

const KINDS: SnapshotKind[] = ['boards', 'ranks']

/** Resolves once what the shelf holds is installed (nothing, the first time a market starts). */
export async function followSnapshots(
  records: Pick<Records, 'snapshots' | 'cluster'>,
  stats: StatsService,
  log: Logger,
): Promise<SnapshotFollower> {
  const installed: Record<SnapshotKind, number> = { boards: -1, ranks: -1 }
  const loading: Partial<Record<SnapshotKind, Promise<void>>> = {}

  function install(kind: SnapshotKind, generation: number, content: BoardsSnapshot['boards'] | RanksSnapshot['ranks']) {
    if (generation <= installed[kind]) return
    installed[kind] = generation
    if (kind === 'boards') stats.installBoards(content as BoardsSnapshot['boards'])
    else stats.installRanks(content as RanksSnapshot['ranks'])
  }

  async function load(kind: SnapshotKind): Promise<void> {
    const snapshot = await records.snapshots.latest(kind)
    if (!snapshot || snapshot.generation <= installed[kind]) return
    const parsed = JSON.parse(snapshot.body) as BoardsSnapshot & RanksSnapshot
    install(kind, snapshot.generation, kind === 'boards' ? parsed.boards : parsed.ranks)
  }

  /** One load of a kind at a time; a notice meanwhile loads again after it (it may name a newer generation). */
  function reload(kind: SnapshotKind): Promise<void> {
    const next = (loading[kind] ?? Promise.resolve())
      .then(() => load(kind))
      .catch((error: unknown) => {
        log.warn('could not load a published snapshot; the next notice or start loads it', {
          kind,
          error: String((error as Error)?.message ?? error).split('\n')[0],
        })
      })
    loading[kind] = next
    return next
  }

  const unhear = records.cluster?.hear('snapshots', (payload) => {
    if (payload === null) return void KINDS.forEach(reload) // (re)subscribed: a publication may have gone unheard
    const [kind, generation] = payload.split(':') as [SnapshotKind, string]
    if (KINDS.includes(kind) && Number(generation) > installed[kind]) void reload(kind)
  })
  await Promise.all(KINDS.map(reload))
  return {
    built: (kind: SnapshotKind, generation: number, content: BoardsSnapshot['boards'] | RanksSnapshot['ranks']) =>
      install(kind, generation, content),
    stop: () => unhear?.(),
  }
}
