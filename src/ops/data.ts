// Backing up, restoring, checking and moving a data directory's records and content. The same functions run in the
// server (asked over its control socket, while it serves) and in a command on a stopped server's data directory.
//
// A backup is a directory: trellis.db (a consistent copy, VACUUM INTO), content.car (every block of every entry and
// cover, each once), secret.key, and manifest.json (what is in it, with each file's SHA-256). Caches (cache/,
// snapshot-*.json) are left out: the server rebuilds them.
import type { ModerationService } from '../domain/moderation.ts'
import { createHash } from 'node:crypto'
import { copyFileSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ContentStore } from '../content/store.ts'
import type { Records } from '../store/stores.ts'
import type { Inconsistency } from '../store/ledger-audit.ts'
import { openCopy } from '../store/open.ts'
import { OccupiedDatabase, UnloadableText, type Lease } from '../store/records.ts'
import { tightenTree } from '../store/permissions.ts'
import { newerSchema } from '../store/migrations/index.ts'
import { VERSION } from '../version.ts'
import { changedText, nulPolicy, unloadable } from './nul-text.ts'

export const BACKUP_FORMAT = 'trellis-backup'
const BACKUP_VERSION = 1

/** Reports long work: `done` of `total` (when known) of `what`. */
export type Progress = (what: string, done: number, total?: number) => void

/** What the operations need from a data directory, open either by the server or by the command. */
export interface DataAccess {
  dataDir: string
  content: ContentStore
  /** Every CID the records name (entries' content and feed covers). */
  cids(): Promise<string[]>
  /** A consistent copy of the database written to `path`. */
  copyTo(path: string): Promise<void>
  /** The database engine's complaints about its own files (none when sound), or why it could not check them. */
  integrity(): Promise<{ problems: string[]; skipped?: string }>
  /** Totals that disagree with the ledger, and the other rules the records must keep. */
  inconsistencies(): Promise<Inconsistency[]>
  /** The server key (kept in the data directory, or with the records in PostgreSQL). */
  secret(): Promise<Uint8Array>
  /** A lease on the records (records.lease): null while another process holds it. */
  lease(name: string): Promise<Lease | null>
  /** Takedowns (trellis takedown, reinstate, takedowns): the running server's own, so its leaderboards follow at once. */
  moderation: ModerationService
}

export interface Manifest {
  format: typeof BACKUP_FORMAT
  version: number
  trellis_version: string
  created_at: string
  schema_version: number
  counts: { feeds: number; entries: number; transactions: number; items: number; blocks: number }
  files: Record<string, { bytes: number; sha256: string }>
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** Writes these items as a CAR file at `path`; returns how many blocks it holds. */
export async function writeCar(content: ContentStore, roots: string[], path: string, progress: Progress): Promise<number> {
  let blocks = 0
  const sink = Bun.file(path).writer()
  for await (const chunk of content.exportCar(roots, () => progress('blocks', ++blocks))) sink.write(chunk)
  await sink.end()
  return blocks
}

/** A file's bytes, read in chunks. */
export const fileChunks = (path: string) => createReadStream(path) as AsyncIterable<Uint8Array>

/** A directory that does not exist or holds nothing but `allowed` (a data directory's rebuildable cache/). */
const isEmptyDir = (dir: string, allowed: string[] = []) =>
  !existsSync(dir) || (statSync(dir).isDirectory() && readdirSync(dir).every((name) => allowed.includes(name)))

/** Writes a backup of `access` into `dir` (new or empty). */
export async function backup(access: DataAccess, dir: string, progress: Progress): Promise<Manifest> {
  if (!isEmptyDir(dir)) throw new Error(`${dir} is not empty: a backup goes into a new or empty directory`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  progress('database', 0)
  await access.copyTo(join(dir, 'trellis.db'))
  const copy = openCopy(join(dir, 'trellis.db'))
  let counts: Omit<Manifest['counts'], 'blocks'>
  let roots: string[]
  let schema: number
  try {
    roots = await copy.read.inventory.namedCids()
    counts = { ...(await copy.read.inventory.rows()), items: roots.length }
    schema = await copy.upkeep.schemaVersion()
  } finally {
    await copy.close()
  }
  // The copy names these items, and records are never removed, so the live database names them too: gc keeps
  // their blocks.
  const blocks = await writeCar(access.content, roots, join(dir, 'content.car'), progress)
  writeFileSync(join(dir, 'secret.key'), `${Buffer.from(await access.secret()).toString('hex')}\n`, { mode: 0o600 })
  const files: Manifest['files'] = {}
  for (const name of ['trellis.db', 'content.car', 'secret.key']) {
    files[name] = { bytes: statSync(join(dir, name)).size, sha256: await sha256File(join(dir, name)) }
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    trellis_version: VERSION,
    created_at: new Date().toISOString(),
    schema_version: schema,
    counts: { ...counts, blocks },
    files,
  }
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  return manifest
}

/** The manifest of a backup whose files are all there and unchanged; throws with what is wrong otherwise. */
export async function readBackup(dir: string): Promise<Manifest> {
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
  } catch {
    throw new Error(`${dir} holds no readable manifest.json: not a Trellis backup`)
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION)
    throw new Error(`${dir}: unknown backup format ${manifest.format} v${manifest.version}`)
  for (const [name, expected] of Object.entries(manifest.files)) {
    const path = join(dir, name)
    if (!existsSync(path)) throw new Error(`${dir}: ${name} is missing`)
    if ((await sha256File(path)) !== expected.sha256)
      throw new Error(`${dir}: ${name} does not match its SHA-256 in manifest.json (damaged or changed)`)
  }
  return manifest
}

/** The schema version a database copy was migrated to. */
async function schemaOf(path: string): Promise<number> {
  const copy = openCopy(path)
  try {
    return await copy.upkeep.schemaVersion()
  } finally {
    await copy.close()
  }
}

/** Restores a backup into `dataDir` (new or empty); `open` opens the content store there. */
export async function restore(
  backupDir: string,
  dataDir: string,
  open: (dataDir: string) => Promise<ContentStore>,
  progress: Progress,
): Promise<Manifest> {
  const manifest = await readBackup(backupDir)
  // A backup of a newer Trellis: this binary would serve a database it does not understand.
  const newer = newerSchema(
    Math.max(manifest.schema_version ?? 0, await schemaOf(join(backupDir, 'trellis.db'))),
    `the backup ${backupDir}`,
  )
  if (newer) throw new Error(newer)
  // cache/ may be there already: the executable puts its addons in it before anything else.
  if (!isEmptyDir(dataDir, ['cache'])) throw new Error(`${dataDir} is not empty: restore into a new or empty data directory`)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  copyFileSync(join(backupDir, 'trellis.db'), join(dataDir, 'trellis.db'))
  copyFileSync(join(backupDir, 'secret.key'), join(dataDir, 'secret.key'))
  const content = await open(dataDir)
  try {
    let blocks = 0
    await content.importCar(fileChunks(join(backupDir, 'content.car')), () => progress('blocks', ++blocks, manifest.counts.blocks))
  } finally {
    await content.close()
  }
  tightenTree(dataDir) // a backup's files keep their modes when copied: one made by hand may be readable by all
  return manifest
}

/** What a restore into a database (PostgreSQL) is given: the records there, opened and migrated, and its content store. */
export interface RestoreTarget {
  /** As messages name it: "the database postgres://trellis@db/trellis". */
  name: string
  records: Records
  content: ContentStore
  /** A file for the backup's database brought to this binary's schema, removed after. */
  scratch: string
}

/** What a restore into a database answers: the backup's manifest, and what was changed of text PostgreSQL cannot hold. */
export type RestoredIntoDatabase = Manifest & { changed_text?: string[] }

/**
 * Restores a backup into a database holding no market yet: the records in one transaction, the key, then the content.
 * `replaceNul`: text with NUL that cannot be carried over as served is stored with U+FFFD for each NUL (see nulPolicy);
 * without it such text refuses the restore, in the words of `refusal` (by default, of a restore of this backup).
 */
export async function restoreIntoDatabase(
  backupDir: string,
  target: RestoreTarget,
  progress: Progress,
  options: { replaceNul?: boolean; refusal?: (error: UnloadableText) => Error } = {},
): Promise<RestoredIntoDatabase> {
  const manifest = await readBackup(backupDir)
  const newer = newerSchema(
    Math.max(manifest.schema_version ?? 0, await schemaOf(join(backupDir, 'trellis.db'))),
    `the backup ${backupDir}`,
  )
  if (newer) throw new Error(newer)
  progress('database', 0)
  let loaded: Awaited<ReturnType<typeof target.records.upkeep.loadCopy>>
  try {
    loaded = await target.records.upkeep.loadCopy(join(backupDir, 'trellis.db'), target.scratch, nulPolicy(options.replaceNul ?? false))
  } catch (error) {
    if (error instanceof OccupiedDatabase) throw new Error(`${target.name} is not empty (${error.message}): restore into an empty database`)
    if (error instanceof UnloadableText) {
      throw (
        options.refusal?.(error) ??
        unloadable(
          error,
          `the backup ${backupDir}`,
          'Run the restore again with --replace-nul to store each NUL as U+FFFD (�), or restore the ' +
            'backup into a data directory, change those values there, and move it with migrate-to-postgres.',
        )
      )
    }
    throw error
  }
  const secret = readFileSync(join(backupDir, 'secret.key'), 'utf8').trim()
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new Error(`${backupDir}: secret.key is not a 32-byte hex key`)
  await target.records.transact((tx) => tx.meta.set('secret', secret))
  let blocks = 0
  await target.content.importCar(fileChunks(join(backupDir, 'content.car')), () => progress('blocks', ++blocks, manifest.counts.blocks))
  return loaded.nul.length > 0 ? { ...manifest, changed_text: changedText(loaded.nul) } : manifest
}

export interface VerifyReport {
  ok: boolean
  integrity: string[]
  /** Why the engine's own check did not run (PostgreSQL without amcheck); absent when it ran. */
  integrity_skipped?: string
  items: { checked: number; problems: Array<{ cid: string; problem: string }> }
  inconsistencies: Inconsistency[]
}

/** The database is sound, every item its records name is whole and hashes to its CID, and the totals match the ledger. */
export async function verify(access: DataAccess, progress: Progress): Promise<VerifyReport> {
  progress('database', 0)
  const [integrity, inconsistencies] = await Promise.all([access.integrity(), access.inconsistencies()])
  const cids = await access.cids()
  const problems: VerifyReport['items']['problems'] = []
  let checked = 0
  for (const cid of cids) {
    const problem = await access.content.check(cid)
    if (problem) problems.push({ cid, problem })
    progress('items', ++checked, cids.length)
  }
  return {
    ok: integrity.problems.length === 0 && problems.length === 0 && inconsistencies.length === 0,
    integrity: integrity.problems,
    ...(integrity.skipped ? { integrity_skipped: integrity.skipped } : {}),
    items: { checked, problems },
    inconsistencies,
  }
}
