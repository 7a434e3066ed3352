import { Database } from 'bun:sqlite'
import { MIGRATIONS, newerSchema } from '../migrations/index.ts'

export type Db = Database

export function openDb(path: string): Db {
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  // FULL: a committed purchase survives a power cut, not just a process crash (NORMAL could roll it back).
  db.exec('PRAGMA synchronous = FULL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec('PRAGMA busy_timeout = 5000')
  // Every insert that fires the tally triggers opens a statement journal: in memory it costs a third less.
  db.exec('PRAGMA temp_store = MEMORY')
  try {
    migrate(db, path)
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

function migrate(db: Db, path: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  const applied = new Set(db.query<{ version: number }, []>('SELECT version FROM schema_migrations').all().map((r) => r.version))
  // An older binary on a newer database would write rows the newer schema's rules (triggers, columns) do not expect.
  const newer = newerSchema(Math.max(0, ...applied), `the database ${path}`)
  if (newer) throw new Error(newer)
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue
    db.transaction(() => {
      db.exec(m.sql)
      db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Math.floor(Date.now() / 1000))
    })()
  }
}

/** PRAGMA integrity_check: an empty list when the database is sound, else what SQLite found (at most 100 lines). */
export function integrityCheck(db: Db): string[] {
  const rows = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check(100)').all().map((r) => r.integrity_check)
  return rows.length === 1 && rows[0] === 'ok' ? [] : rows
}
