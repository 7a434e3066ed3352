// Downgrades are refused: a database migrated by a newer Trellis (a schema version past the ones this binary knows)
// is not served, not checked by verify-ledger, and a backup of one is not restored. Real processes, real files.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { restoreTarget, startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { withRecords, type RecordsOf } from '../dev/records-sql.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { SCHEMA_VERSION } from '../src/store/migrations/index.ts'
import { shownPostgresUrl } from '../src/store/postgres/url.ts'

// The newest step's number, not the count of steps: numbers may skip one (a step of another branch).
const FUTURE = SCHEMA_VERSION + 1
const scratch: string[] = []
let server: TestServer
let backupDir: string

beforeAll(async () => {
  server = await startTestServer()
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  await createEntry(server.url, owner, feed.id, { content_base64: b64('kept'), mime_type: 'text/plain' })
  await server.stop()
  const parent = tempDir('trellis-schema-')
  backupDir = join(parent, 'backup')
  scratch.push(parent) // the backup and the copies made beside it
  expect((await trellis(['backup', backupDir], server.dataDir)).code).toBe(0)
})
afterAll(async () => {
  await server.dispose()
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** What a newer Trellis leaves behind: one more migration applied (to a server's records, or a backup's trellis.db). */
async function migrateToTheFuture(records: RecordsOf) {
  await withRecords(records, (db) =>
    db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      FUTURE,
      `${String(FUTURE).padStart(3, '0')}-future`,
      0,
    ]),
  )
}

/** The database as a message names it: the data directory's file, or the PostgreSQL URL (without a password). */
const databaseName = (server: TestServer) =>
  server.recordsEnv.TRELLIS_DATABASE_URL ? shownPostgresUrl(server.recordsEnv.TRELLIS_DATABASE_URL) : join(server.dataDir, 'trellis.db')

test('a database migrated by a newer Trellis: the server refuses to start, in one line; verify-ledger too', async () => {
  await migrateToTheFuture(server)
  const refused = await server.restart().then(
    () => 'started',
    (error: Error) => error.message,
  )
  expect(refused).toContain(
    `trellis: the database ${databaseName(server)} has schema version ${FUTURE}, newer than this ` +
      `Trellis knows (${SCHEMA_VERSION}): it was written by a newer Trellis`,
  )
  expect(existsSync(join(server.dataDir, 'trellis.pid'))).toBe(false) // nothing held

  const ledger = await trellis(['verify-ledger'], server.dataDir)
  expect(ledger.code).toBe(2)
  expect(ledger.stderr).toContain(`has schema version ${FUTURE}, newer than this Trellis knows`)

  // A data command on the stopped directory refuses it the same way, and holds nothing afterwards either.
  const verify = await trellis(['verify'], server.dataDir)
  expect(verify.code).toBe(1)
  expect(verify.stderr).toContain(`has schema version ${FUTURE}, newer than this Trellis knows`)
  expect(existsSync(join(server.dataDir, 'trellis.pid'))).toBe(false)
})

const restoreFrom = async (backup: string) => {
  const target = tempDir('trellis-restore-')
  scratch.push(target)
  rmSync(target, { recursive: true, force: true })
  const result = await trellis(['restore', backup], await restoreTarget(target))
  return { ...result, restored: existsSync(target) ? readdirSync(target).filter((name) => name !== 'cache') : [] }
}

test('restore refuses a backup whose manifest says a newer schema, and one whose database is newer', async () => {
  const sound = await restoreFrom(backupDir)
  expect(sound.code).toBe(0) // the backup as made restores

  const byManifest = `${backupDir}-manifest`
  scratch.push(byManifest)
  cpSync(backupDir, byManifest, { recursive: true })
  const manifest = JSON.parse(readFileSync(join(byManifest, 'manifest.json'), 'utf8'))
  writeFileSync(join(byManifest, 'manifest.json'), JSON.stringify({ ...manifest, schema_version: FUTURE }))
  const refused = await restoreFrom(byManifest)
  expect(refused.code).toBe(1)
  expect(refused.stderr).toContain(
    `the backup ${byManifest} has schema version ${FUTURE}, newer than this Trellis knows (${SCHEMA_VERSION})`,
  )
  expect(refused.restored).toEqual([]) // nothing copied

  // The database itself newer, its SHA-256 in the manifest updated to match (a manifest that lags behind).
  const byDatabase = `${backupDir}-database`
  scratch.push(byDatabase)
  cpSync(backupDir, byDatabase, { recursive: true })
  await migrateToTheFuture({ dataDir: byDatabase })
  const bytes = readFileSync(join(byDatabase, 'trellis.db'))
  manifest.files['trellis.db'] = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }
  writeFileSync(join(byDatabase, 'manifest.json'), JSON.stringify(manifest))
  const newerDb = await restoreFrom(byDatabase)
  expect(newerDb.code).toBe(1)
  expect(newerDb.stderr).toContain(`has schema version ${FUTURE}, newer than this Trellis knows`)
  expect(newerDb.restored).toEqual([])
})
