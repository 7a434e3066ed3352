// Opening the embedded database (one SQLite file in WAL mode) and migrating it: the only place bun:sqlite opens a
// file, in every process (the server, the data commands, verify-ledger, the long-reads worker).
import { Database } from 'bun:sqlite'
import { MIGRATIONS, newerSchema, notCurrentSchema, SchemaMismatch } from '../migrations/index.ts'
import type { Records } from '../stores.ts'
import { embeddedRecords, type SqliteRecordsOptions } from './records.ts'

/**
 * How a file is opened. `migrate`: created if missing and brought to this binary's schema (the server, the data
 * commands). `current`: read-write, only at exactly this binary's schema (verify-ledger, which must not migrate
 * behind a server's back). `readonly`: as it is (a worker's second connection, a backup's copy).
 */
export type Db = Database

export type OpenMode = 'migrate' | 'current' | 'readonly'

export { SchemaMismatch }

export function openEmbeddedRecords(path: string, mode: OpenMode, options: SqliteRecordsOptions = {}): Records {
  return embeddedRecords(mode === 'migrate' ? openDb(path) : openAsIs(path, mode), options)
}

/** The file at `path`, created if missing and migrated to this binary's schema (tests and the bench seed use it bare). */
export function openDb(path: string): Database {
  const db = new Database(path, { create: true, strict: true })
  return settled(db, () => {
    readWrite(db)
    migrate(db, path)
  })
}

function openAsIs(path: string, mode: 'current' | 'readonly'): Database {
  const db = mode === 'readonly' ? new Database(path, { readonly: true, strict: true }) : new Database(path, { strict: true })
  return settled(db, () => {
    db.exec('PRAGMA busy_timeout = 5000')
    if (mode === 'current') {
      readWrite(db)
      requireCurrent(db, path)
    }
  })
}

/** The database once `prepare` has run, or closed and the error thrown. */
function settled(db: Database, prepare: () => void): Database {
  try {
    prepare()
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

function readWrite(db: Database): void {
  db.exec('PRAGMA journal_mode = WAL')
  // FULL: a committed purchase survives a power cut, not just a process crash (NORMAL could roll it back).
  db.exec('PRAGMA synchronous = FULL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec('PRAGMA busy_timeout = 5000')
  // Every insert that fires the tally triggers opens a statement journal: in memory it costs a third less.
  db.exec('PRAGMA temp_store = MEMORY')
}

const appliedVersions = (db: Database) =>
  new Set(
    db
      .query<{ version: number }, []>('SELECT version FROM schema_migrations')
      .all()
      .map((r) => r.version),
  )

function migrate(db: Database, path: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  const applied = appliedVersions(db)
  // An older binary on a newer database would write rows the newer schema's rules (triggers, columns) do not expect.
  const newer = newerSchema(Math.max(0, ...applied), `the database ${path}`)
  if (newer) throw new SchemaMismatch(newer)
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue
    // A step that makes a table again (what SQLite's ALTER TABLE cannot change in place) runs as SQLite's own
    // procedure has it: foreign keys off around its transaction, every one of them checked before it commits.
    const rebuilds = m.sql.startsWith(REBUILDS_TABLES)
    if (rebuilds) db.exec('PRAGMA foreign_keys = OFF')
    try {
      db.transaction(() => {
        db.exec(m.sql)
        if (rebuilds) {
          const broken = db.query('PRAGMA foreign_key_check').all()
          if (broken.length > 0) throw new Error(`migration ${m.name} would break foreign keys: ${JSON.stringify(broken.slice(0, 5))}`)
        }
        db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          m.version,
          m.name,
          Math.floor(Date.now() / 1000),
        )
      })()
    } finally {
      if (rebuilds) db.exec('PRAGMA foreign_keys = ON')
    }
  }
}

/** The first line of a migration step that makes a table again (see migrate). */
const REBUILDS_TABLES = '-- trellis: rebuilds tables'

function requireCurrent(db: Database, path: string): void {
  const problem = notCurrentSchema(Math.max(0, ...appliedVersions(db)), `the database ${path}`)
  if (problem) throw new SchemaMismatch(problem)
}
