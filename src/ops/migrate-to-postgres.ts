// `trellis migrate-to-postgres --data-dir D --database-url U`: an embedded instance moved into PostgreSQL, as an
// operator would do it by hand: a backup of D (records, content, key), restored into U (which holds no market yet),
// then verified there. D is left as it was; the server is then started with the database URL instead.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../config.ts'
import { commandDataAccess, withDataStores } from './data-stores.ts'
import { lockDataDir, lockHolder } from '../store/lock.ts'
import { recordsName, recordsPlace } from '../store/open.ts'
import { backup, restoreIntoDatabase, verify, type Manifest, type Progress, type VerifyReport } from './data.ts'
import { unloadable } from './nul-text.ts'

export interface Migrated {
  moved: Manifest['counts']
  /** Text PostgreSQL cannot hold (NUL), and how it was carried over (see nulPolicy); absent when there was none. */
  changed_text?: string[]
  verify: VerifyReport
}

/** `replaceNul`: text with NUL that cannot be carried over as served is stored with U+FFFD for each NUL, not refused. */
export async function migrateToPostgres(config: Config, progress: Progress, options: { replaceNul?: boolean } = {}): Promise<Migrated> {
  if (!config.databaseUrl) throw new Error('usage: trellis migrate-to-postgres --data-dir <dir> --database-url <postgres://…>')
  const holder = lockHolder(config.dataDir)
  if (holder !== null)
    throw new Error(`a server (pid ${holder}) holds ${config.dataDir}: stop it first, so that nothing is written after the move`)
  const embedded: Config = { ...config, databaseUrl: null, content: 'leveldb' }
  await using held = new AsyncDisposableStack()
  held.defer(lockDataDir(config.dataDir))
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-move-'))
  held.defer(() => rmSync(scratch, { recursive: true, force: true }))

  const manifest = await withDataStores(embedded, (records, content) =>
    backup(commandDataAccess(embedded, records, content), join(scratch, 'backup'), progress),
  )
  return await withDataStores(config, async (records, content) => {
    const restored = await restoreIntoDatabase(
      join(scratch, 'backup'),
      { name: await recordsName(recordsPlace(config)), records, content, scratch: join(scratch, 'schema.db') },
      progress,
      {
        replaceNul: options.replaceNul,
        refusal: (error) =>
          unloadable(
            error,
            `the data directory ${config.dataDir}`,
            `Run migrate-to-postgres again with --replace-nul to store each NUL as U+FFFD (�) in PostgreSQL ` +
              `(${config.dataDir} keeps them as they are), or change those values first.`,
          ),
      },
    )
    const changed = restored.changed_text ? { changed_text: restored.changed_text } : {}
    return { moved: manifest.counts, ...changed, verify: await verify(commandDataAccess(config, records, content), progress) }
  })
}
