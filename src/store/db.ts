import { Database } from 'bun:sqlite'
import { MIGRATIONS, newerSchema } from './migrations/index.ts'
import type { Changes } from './records.ts'

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

/**
 * UPDATE table SET <values>, updated_at = now WHERE id = ?. Returns false when a UNIQUE index refuses the new
 * values (the database decides, so concurrent writers cannot both win).
 */
export function patchRow(db: Db, table: string, id: string, values: Record<string, string | number | bigint | null>, now: number): boolean {
  const columns = Object.keys(values)
  try {
    db.query(`UPDATE ${table} SET ${[...columns.map((c) => `${c} = ?`), 'updated_at = ?'].join(', ')} WHERE id = ?`).run(...columns.map((c) => values[c]), now, id)
    return true
  } catch (error) {
    if (String((error as Error).message).includes('UNIQUE constraint failed')) return false
    throw error
  }
}

/** Changes of a connection that is its database's only writer: total_changes() moves exactly on a write. */
export function connectionChanges(db: Db): Pick<Changes, 'version' | 'live'> {
  const changes = db.query<{ n: number }, []>('SELECT total_changes() AS n')
  return { version: () => changes.get()!.n, live: () => true }
}

/**
 * Group commit: writes queued in the same turn of the event loop run in one IMMEDIATE transaction, each in a
 * savepoint of its own, and share one commit (one fsync) instead of paying one each. A write that throws is rolled
 * back alone and rejects alone; a failed commit rejects them all. Each promise settles only after the commit, so a
 * caller answers its client only once its write is durable.
 */
export function commitGroup(db: Db) {
  type Queued = { work: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }
  let queue: Queued[] = []

  function flush() {
    const batch = queue
    queue = []
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = []
    try {
      db.transaction(() => {
        for (const item of batch) {
          try {
            outcomes.push({ ok: true, value: db.transaction(item.work)() }) // nested: a savepoint
          } catch (error) {
            outcomes.push({ ok: false, error })
          }
        }
      }).immediate()
    } catch (error) {
      for (const item of batch) item.reject(error)
      return
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) item.resolve(outcome.value)
      else item.reject(outcome.error)
    })
  }

  return <T>(work: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
    })
}
export type CommitGroup = ReturnType<typeof commitGroup>

/** PRAGMA integrity_check: an empty list when the database is sound, else what SQLite found (at most 100 lines). */
export function integrityCheck(db: Db): string[] {
  const rows = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check(100)').all().map((r) => r.integrity_check)
  return rows.length === 1 && rows[0] === 'ok' ? [] : rows
}
