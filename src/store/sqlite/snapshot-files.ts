// The embedded engine's snapshot shelf: each kind a file beside the database, written whole to a temporary name and
// renamed, so a reader never sees half of one. A generation is a time in milliseconds (a file's, or a publication's,
// never less than the one before), so a shelf opened again (a thread's records reopened) still counts upward; a
// restarted server serves the last files from its first request, before its first rebuild.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SnapshotKind, SnapshotShelf } from '../records.ts'

const FILE: Record<SnapshotKind, string> = { boards: 'snapshot-leaderboards.json', ranks: 'snapshot-ranks.json' }

/** `dir` null (a database in memory): the shelf keeps the snapshots in memory too. */
export function snapshotFiles(dir: string | null): SnapshotShelf {
  let last = 0
  const held = new Map<SnapshotKind, { generation: number; generated_at: number; body: string }>()
  return {
    async latest(kind) {
      if (dir === null) return held.get(kind) ?? null
      try {
        const path = join(dir, FILE[kind])
        const body = readFileSync(path, 'utf8')
        const generatedAt = (JSON.parse(body) as { generated_at?: unknown }).generated_at
        return typeof generatedAt === 'number' ? { generation: Math.floor(statSync(path).mtimeMs), generated_at: generatedAt, body } : null
      } catch {
        return null // none yet, or unreadable: a rebuild follows anyway
      }
    },
    async publish(kind, generatedAt, body) {
      if (dir !== null) {
        const path = join(dir, FILE[kind])
        writeFileSync(`${path}.tmp`, body, { mode: 0o600 })
        renameSync(`${path}.tmp`, path)
      }
      last = Math.max(last + 1, Date.now() + 1) // after the file's own time
      if (dir === null) held.set(kind, { generation: last, generated_at: generatedAt, body })
      return last
    },
  }
}
