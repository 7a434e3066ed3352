// The seeded data directory: seeded once per (migrations, seed script) version and kept under the temp dir, then
// copied for every run because the server writes to its data directory.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Manifest } from './seed.ts'

const ROOT = join(import.meta.dir, '..', '..')
const MAX_AGE_S = 24 * 3600 // periods (1d, 7d) are relative to now: an old seed would drift out of them

function cacheKey(): string {
  const hash = createHash('sha256')
  // The seed writes the embedded records: their migrations make the version (PostgreSQL's are applied per run).
  const migrations = join(ROOT, 'src', 'store', 'migrations', 'sqlite')
  for (const name of readdirSync(migrations)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    hash.update(name).update(readFileSync(join(migrations, name)))
  for (const name of ['seed.ts', 'prng.ts']) hash.update(readFileSync(join(import.meta.dir, name)))
  return hash.digest('hex').slice(0, 16)
}

function readManifest(dir: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'bench-manifest.json'), 'utf8')) as Manifest
  } catch {
    return null
  }
}

/** Returns the cached seeded directory, seeding it first (in a child process) when missing or stale. */
export async function seededDir(
  small: boolean,
  log: (line: string) => void,
): Promise<{ dir: string; manifest: Manifest; reused: boolean }> {
  const prefix = `trellis-bench-${small ? 'small' : 'full'}-`
  const dir = join(tmpdir(), prefix + cacheKey())
  const cached = readManifest(dir)
  if (cached && Date.now() / 1000 - cached.created_at < MAX_AGE_S) {
    log(`bench: reusing seeded data ${dir} (seeded in ${(cached.seed_ms / 1000).toFixed(1)} s)`)
    return { dir, manifest: cached, reused: true }
  }
  // Older versions of this size are dead weight (the full one is over a gigabyte).
  for (const name of readdirSync(tmpdir())) if (name.startsWith(prefix)) rmSync(join(tmpdir(), name), { recursive: true, force: true })
  const partial = `${dir}.partial-${process.pid}`
  try {
    log(`bench: seeding ${small ? 'small' : 'full'} data into ${dir}`)
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'seed.ts'), partial, ...(small ? ['--small'] : [])], {
      cwd: ROOT,
      stdout: 'inherit',
      stderr: 'inherit',
    })
    if ((await proc.exited) !== 0) throw new Error(`seeding failed (exit ${proc.exitCode})`)
    renameSync(partial, dir) // only a finished seed is ever reused
  } finally {
    rmSync(partial, { recursive: true, force: true })
  }
  return { dir, manifest: readManifest(dir)!, reused: false }
}

/** A private copy of the seeded directory for one server run; the caller removes it. */
export function freshCopy(seeded: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'trellis-bench-run-'))
  cpSync(seeded, copy, { recursive: true })
  if (!existsSync(join(copy, 'trellis.db'))) throw new Error(`copy of ${seeded} has no trellis.db`)
  return copy
}

/**
 * A seeded directory of this size to copy from, whatever schema it was seeded at: this version's when there is one,
 * else another still fresh (a server migrates its copy on start), else a new seed. For a measure that only copies it.
 */
export async function anySeededDir(small: boolean, log: (line: string) => void): Promise<{ dir: string; manifest: Manifest }> {
  const prefix = `trellis-bench-${small ? 'small' : 'full'}-`
  const fresh = (dir: string) => {
    const manifest = readManifest(dir)
    return manifest && Date.now() / 1000 - manifest.created_at < MAX_AGE_S ? manifest : null
  }
  if (!fresh(join(tmpdir(), prefix + cacheKey())))
    for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(prefix) && !n.includes('.partial-'))) {
      const manifest = fresh(join(tmpdir(), name))
      if (manifest) {
        log(`bench: copying seeded data of another schema, ${join(tmpdir(), name)} (the server migrates its copy)`)
        return { dir: join(tmpdir(), name), manifest }
      }
    }
  return seededDir(small, log)
}
