// The records port on the embedded engine: one bun:sqlite connection in WAL mode.
//
// Group commit: transactions asked for in one turn of the event loop share one IMMEDIATE transaction, each in a
// savepoint of its own, and one COMMIT (one fsync). A transaction that throws is rolled back alone and rejects
// alone; a failed COMMIT rejects them all; each settles only after the COMMIT, so a caller answers once its write is
// durable.
//
// The write gate: statements on one connection all run inside whatever transaction is open on it, so while a group
// is open every read waits for its end (a read would otherwise see rows a savepoint is about to roll back).
// Transactions await only their own statements, which resolve within the turn, so the wait is short; one that awaits
// anything else holds every reader meanwhile, and with `assertNoIo` (tests) fails as "I/O inside a transaction".
import type { Database } from 'bun:sqlite'
import { randomUUID } from 'node:crypto'
import { dirname } from 'node:path'
import type { Sql } from '../query.ts'
import { sqliteStatements } from './statements.ts'
import { localChanges, type Durability, type Lease, type Records, type StoresOn, type Upkeep, type WriteOptions } from '../records.ts'
import { sharedStores, type Stores } from '../stores.ts'
import { snapshotFiles } from './snapshot-files.ts'
import { loadSecret } from './secret-file.ts'

export interface SqliteRecordsOptions {
  /** Fail a transaction that is still running when the event loop turns (it awaited something besides its tx). */
  assertNoIo?: boolean
}

/** The records of an embedded database: every store over this one connection. */
export const embeddedRecords = (db: Database, options: SqliteRecordsOptions = {}): Records<Stores> =>
  sqliteRecords(db, sharedStores, options)

const GRANTED: Lease = { lost: new Promise<void>(() => {}), release: async () => {} }

export function sqliteRecords<Stores>(db: Database, storesOn: StoresOn<Stores>, options: SqliteRecordsOptions = {}): Records<Stores> {
  const run = sqliteStatements(db)
  /** The data directory the database file is in: its snapshots and the server key are kept beside it. */
  const directory = db.filename && db.filename !== ':memory:' ? dirname(db.filename) : null

  let gate: Promise<void> | null = null
  const pass = async () => {
    while (gate) await gate
  }
  const gated: Sql = {
    all: async (query) => (gate && (await pass()), run.all(query)),
    get: async (query) => (gate && (await pass()), run.get(query)),
    run: async (query) => (gate && (await pass()), run.run(query)),
  }

  /** Statements of one transaction: refused once it is over (a late statement would land in someone else's). */
  function within(isOpen: () => boolean): Sql {
    const check = () => {
      if (!isOpen()) throw new Error('a statement after its transaction ended')
    }
    return {
      all: async (query) => (check(), run.all(query)),
      get: async (query) => (check(), run.get(query)),
      run: async (query) => (check(), run.run(query)),
    }
  }

  const { changes, committed } = localChanges()

  type Queued = {
    work: (tx: Stores) => Promise<unknown>
    durability: Durability
    unkept: boolean
    resolve: (value: unknown) => void
    reject: (error: unknown) => void
  }
  let queue: Queued[] = []

  const totalChanges = db.query<{ n: number }, []>('SELECT total_changes() AS n')
  /** Rows written on this connection so far: a transaction that wrote none (a job with nothing to do) moves no version. */
  const rowsWritten = () => totalChanges.get()!.n

  async function runOne(
    item: Queued,
    savepoint: string,
  ): Promise<{ ok: true; value: unknown; wrote: boolean } | { ok: false; error: unknown }> {
    let open = true
    const before = rowsWritten()
    let turned = false
    const sentinel = options.assertNoIo ? setImmediate(() => (turned = true)) : null
    db.exec(`SAVEPOINT ${savepoint}`)
    try {
      const value = await item.work(storesOn(within(() => open)))
      if (turned) throw new Error('I/O inside a transaction: it may await only its tx')
      db.exec(`RELEASE ${savepoint}`)
      return { ok: true, value, wrote: rowsWritten() !== before }
    } catch (error) {
      db.exec(`ROLLBACK TO ${savepoint}`)
      db.exec(`RELEASE ${savepoint}`)
      return { ok: false, error }
    } finally {
      open = false
      if (sentinel) clearImmediate(sentinel)
    }
  }

  async function flush(): Promise<void> {
    const batch = queue
    queue = []
    if (batch.length === 0) return
    let release!: () => void
    gate = new Promise<void>((resolve) => (release = resolve))
    const lazy = batch.every((item) => item.durability === 'lazy')
    const outcomes: Awaited<ReturnType<typeof runOne>>[] = []
    try {
      if (lazy) db.exec('PRAGMA synchronous = NORMAL') // still ordered in the WAL before every later commit
      db.exec('BEGIN IMMEDIATE')
      for (const [i, item] of batch.entries()) outcomes.push(await runOne(item, `w${i}`))
      db.exec('COMMIT')
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK')
      for (const item of batch) item.reject(error)
      return
    } finally {
      if (lazy) db.exec('PRAGMA synchronous = FULL')
      gate = null
      release()
    }
    if (outcomes.some((outcome, i) => outcome.ok && outcome.wrote && !batch[i]!.unkept)) committed()
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) item.resolve(outcome.value)
      else item.reject(outcome.error)
    })
  }

  /** A read transaction: consistent across its statements; holds the gate, as a group does. */
  async function inSnapshot<T>(work: (view: Stores) => Promise<T>): Promise<T> {
    let release!: () => void
    gate = new Promise<void>((resolve) => (release = resolve))
    let open = true
    try {
      db.exec('BEGIN')
      try {
        return await work(storesOn(within(() => open)))
      } finally {
        open = false
        db.exec('COMMIT') // nothing was written: ending it only lets go of the snapshot
      }
    } finally {
      gate = null
      release()
    }
  }

  // Groups commit one after another: a group asked for while one is open waits for its end.
  let groups: Promise<void> = Promise.resolve()
  const schedule = () => setImmediate(() => void (groups = groups.then(flush)))

  /** Work of its own on the connection, between groups (VACUUM and the integrity check refuse an open transaction). */
  function between<T>(work: () => T | Promise<T>): Promise<T> {
    const result = groups.then(work)
    groups = result.then(
      () => {},
      () => {},
    )
    return result
  }
  const upkeep: Upkeep = {
    schemaVersion: () => between(() => db.query<{ v: number | null }, []>('SELECT MAX(version) AS v FROM schema_migrations').get()?.v ?? 0),
    integrity: () =>
      between(() => {
        const rows = db
          .query<{ integrity_check: string }, []>('PRAGMA integrity_check(100)')
          .all()
          .map((r) => r.integrity_check)
        return { problems: rows.length === 1 && rows[0] === 'ok' ? [] : rows }
      }),
    copyTo: (path) => between(() => void db.query('VACUUM INTO ?').run(path)),
    loadCopy: async () => {
      throw new Error('an embedded database is restored by copying its file')
    },
  }

  function transact<T>(work: (tx: Stores) => Promise<T>, { durability = 'full', unkept = false }: WriteOptions = {}) {
    return new Promise<T>((resolve, reject) => {
      if (queue.length === 0) schedule()
      queue.push({ work, durability, unkept, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  const read = storesOn(gated)
  return {
    instance: randomUUID(),
    read,
    // One file, one reader: nothing to route elsewhere.
    reads: read,
    transact,
    // A group's savepoint costs nothing here, and the group commit is what makes a write cheap.
    single: transact,
    snapshot: (work) => between(() => inSnapshot(work)),
    changes,
    lease: async () => GRANTED,
    snapshots: snapshotFiles(directory),
    cluster: null,
    upkeep,
    async secret() {
      if (!directory) throw new Error('an in-memory database has no directory to keep the server key in')
      return loadSecret(directory)
    },
    blockSpaces: null,
    replicas: null,
    async close() {
      await new Promise((resolve) => setImmediate(resolve)) // a group asked for in this turn is scheduled by now
      await groups
      db.close()
    },
  }
}
