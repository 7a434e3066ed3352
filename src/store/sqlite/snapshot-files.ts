// The embedded engine's snapshot shelf: each kind a file beside the database, written whole to a temporary name and
// renamed, so a reader never sees half of one. One process publishes and reads them, so a generation is only
// counted in memory; a restarted server serves the last files from its first request, before its first rebuild.
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SnapshotKind, SnapshotShelf } from '../records.ts'

const FILE: Record<SnapshotKind, string> = { boards: 'snapshot-leaderboards.json', ranks: 'snapshot-ranks.json' }

/** `dir` null (a database in memory): the shelf keeps the snapshots in memory too. */
export function snapshotFiles(dir: string | null): SnapshotShelf {
  let generation = 0
  const held = new Map<SnapshotKind, { generated_at: number; body: string }>()
  return {
    async latest(kind) {
      if (dir === null) {
        const snapshot = held.get(kind)
        return snapshot ? { generation, ...snapshot } : null
      }
      try {
        const body = readFileSync(join(dir, FILE[kind]), 'utf8')
        const generatedAt = (JSON.parse(body) as { generated_at?: unknown }).generated_at
        return typeof generatedAt === 'number' ? { generation, generated_at: generatedAt, body } : null
      } catch {
        return null // none yet, or unreadable: a rebuild follows anyway
      }
    },
    async publish(kind, generatedAt, body) {
      if (dir === null) held.set(kind, { generated_at: generatedAt, body })
      else {
        const path = join(dir, FILE[kind])
        writeFileSync(`${path}.tmp`, body, { mode: 0o600 })
        renameSync(`${path}.tmp`, path)
      }
      return ++generation
    },
  }
}
