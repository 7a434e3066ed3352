// Native addons embedded in the executable (see scripts/build.ts) are loaded from a directory we choose, not from
// $TMPDIR: Bun would extract them there, and a read-only or missing $TMPDIR (docker run --read-only) would stop the
// server. Each is written once, under a name that carries its hash, to the first writable place of: the directory
// set by main.ts (the data directory's cache/addons), $XDG_CACHE_HOME/trellis or ~/.cache/trellis, then $TMPDIR.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

const ENV = 'TRELLIS_ADDON_DIR' // also read by worker threads, which get a copy of the environment

/** Where addons go first; main.ts sets it before anything loads one. */
export function setAddonDir(dir: string): void {
  process.env[ENV] = dir
}

function candidates(): string[] {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return [process.env[ENV], join(cache, 'trellis', 'addons'), join(tmpdir(), 'trellis-addons')].filter((d): d is string => Boolean(d))
}

/** A copy of the embedded addon at `embedded` (a /$bunfs path) on disk, written once. */
function extract(name: string, embedded: string): string {
  const bytes = readFileSync(embedded)
  const file = `${name}-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.node`
  const tried: string[] = []
  for (const dir of candidates()) {
    const path = join(dir, file)
    try {
      if (existsSync(path)) return path
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const partial = `${path}.${process.pid}.partial`
      writeFileSync(partial, bytes, { mode: 0o600 }) // dlopen only reads it
      renameSync(partial, path) // atomic: a concurrent starter sees the whole file or none
      return path
    } catch (error) {
      tried.push(`${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
    }
  }
  throw new Error(`cannot load the ${name} addon: no writable directory to put it in; tried ${tried.join(', ')}`)
}

/** The exports of the embedded addon `name`. */
export function loadEmbeddedAddon(name: string, embedded: string): unknown {
  const module = { exports: {} as unknown }
  process.dlopen(module as NodeJS.Module, extract(name, embedded))
  return module.exports
}
