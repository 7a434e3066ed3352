import { Database } from 'bun:sqlite'
import { MIGRATIONS, newerSchema } from './migrations/index.ts'
import { nowSeconds } from '../lib/clock.ts'

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

interface Held { value: unknown; weight: number; staleAt: number; seq: number }

/**
 * Results of reads, kept until this connection next writes. The server is the database's only writer (the data
 * directory is locked; the stats worker only reads), so total_changes() moves exactly when a result may be stale.
 * A result that also depends on the time says from when it is stale (`staleFrom`, server seconds), and is made
 * again from then on. Bounded by the total length of what it holds: when full, the least recently used results make
 * room, never refusing one. (Approximately: a read moves its result to the recent end only once it has drifted into
 * the older half, so reading a hot result costs one comparison.)
 */
export function readMemo(db: Db, maxChars = 32 * 1024 * 1024, now: () => number = nowSeconds) {
  const changes = db.query<{ n: number }, []>('SELECT total_changes() AS n')
  let version = -1
  const held = new Map<string, Held>() // least recently used first
  let chars = 0
  let seq = 0 // counts insertions and moves: seq - entry.seq is about how far from the recent end an entry is
  const counts = { hits: 0, misses: 0 }

  function evictOldest() {
    const [key, entry] = held.entries().next().value!
    held.delete(key)
    chars -= entry.weight
  }

  /**
   * `compute` may call `staleFrom(t)`: its result no longer holds from server second t. `size`: about how many
   * characters the value holds (a string's own length by default).
   */
  function cached<T = string>(key: string, compute: (staleFrom: (at: number) => void) => T, size: (value: T) => number = (v) => String(v).length): T {
    const n = changes.get()!.n
    if (n !== version) {
      version = n
      held.clear()
      chars = 0
    }
    const found = held.get(key)
    if (found !== undefined && (found.staleAt === Infinity || now() < found.staleAt)) {
      if (seq - found.seq > held.size >> 1) {
        held.delete(key)
        held.set(key, found)
        found.seq = ++seq
      }
      counts.hits++
      return found.value as T
    }
    counts.misses++
    let staleAt = Infinity
    const value = compute((at) => void (at < staleAt && (staleAt = at)))
    if (found !== undefined) {
      held.delete(key)
      chars -= found.weight
    }
    const weight = size(value) + key.length
    if (weight <= maxChars) {
      while (chars + weight > maxChars) evictOldest()
      held.set(key, { value, weight, staleAt, seq: ++seq })
      chars += weight
    }
    return value
  }
  /** What it holds and how often it was asked (for tests and /metrics). */
  cached.stats = () => ({ entries: held.size, chars, ...counts })
  return cached
}
export type ReadMemo = ReturnType<typeof readMemo>

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
