// The data directory holds the server key, the ledger and unpublished content: readable by its owner only, also
// when it existed before (created by hand, restored, or by an older version) with looser modes.
import { chmodSync, lstatSync, readdirSync, type Stats } from 'node:fs'
import { join } from 'node:path'

/** Files the process creates from now on are 0600 and directories 0700 (SQLite and LevelDB create theirs with 0644). */
export function ownerOnlyFromNow(): void {
  process.umask(0o077)
}

/** Tightens every directory under `dir` (itself included) to 0700 and every file to 0600; returns how many changed. */
export function tightenTree(dir: string): number {
  let changed = 0
  const visit = (path: string) => {
    let stat: Stats
    try {
      stat = lstatSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return // renamed or removed since it was listed
      throw error
    }
    if (stat.isSymbolicLink()) return
    const wanted = stat.isDirectory() ? 0o700 : 0o600
    if ((stat.mode & 0o777) !== wanted) {
      chmodSync(path, wanted)
      changed++
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return changed
}
