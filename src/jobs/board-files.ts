// The leaderboards and ranks the long-reads thread last built, kept in the data directory: a restarted server
// serves them from its first request, before its first rebuild.
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BoardKey } from '../domain/leaderboards.ts'
import type { WalletRanks } from '../store/stats.ts'

interface Files {
  boards: { generated_at: number; boards: Partial<Record<BoardKey, string[]>> }
  ranks: { generated_at: number; ranks: WalletRanks[] }
}

const FILE: Record<keyof Files, string> = { boards: 'snapshot-leaderboards.json', ranks: 'snapshot-ranks.json' }

/** Written whole to a temporary name and renamed: a reader never sees half a file. */
export function persist<K extends keyof Files>(dataDir: string, kind: K, content: Files[K]): void {
  const path = join(dataDir, FILE[kind])
  writeFileSync(`${path}.tmp`, JSON.stringify(content), { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
}

/** The last snapshot written, or null when there is none or it cannot be read (a rebuild follows anyway). */
export function loadPersisted<K extends keyof Files>(dataDir: string, kind: K): Files[K] | null {
  try {
    const content = JSON.parse(readFileSync(join(dataDir, FILE[kind]), 'utf8')) as Files[K]
    return typeof content?.generated_at === 'number' ? content : null
  } catch {
    return null
  }
}
