// One server per data directory: a pid file claimed before any store is opened. A file left by a crashed process
// (its pid no longer alive) is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export class DataDirInUse extends Error {}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The pid of the live process holding the data directory, or null. */
export function lockHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'trellis.pid'), 'utf8').trim())
    return alive(pid) ? pid : null
  } catch {
    return null
  }
}

export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'trellis.pid')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
      return () => rmSync(path, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = lockHolder(dataDir)
      if (holder !== null) throw new DataDirInUse(`the data directory ${dataDir} is in use by another trellis process (pid ${holder})`)
      rmSync(path, { force: true }) // stale: its process is gone
    }
  }
  throw new DataDirInUse(`could not lock the data directory ${dataDir}`)
}
