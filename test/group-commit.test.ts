// Group commits (the SQLite records adapter's transact, lib/shared-runs.ts for the content store's LevelDB sync):
// many writers share one commit, yet each is answered only after a commit that covers it, and one writer's failure is
// its own.
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDb } from '../src/store/sqlite/database.ts'
import { q, type Sql } from '../src/store/query.ts'
import { sqliteRecords } from '../src/store/sqlite/records.ts'
import { sharedRuns } from '../src/lib/shared-runs.ts'
import { tempDir } from '../dev/server.ts'

const dir = tempDir('trellis-commit-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function database(name: string) {
  const path = join(dir, name)
  const db = openDb(path)
  db.exec(`CREATE TABLE parents (id INTEGER PRIMARY KEY);
    CREATE TABLE notes (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED, text TEXT NOT NULL)`)
  db.exec('INSERT INTO parents (id) VALUES (1)')
  const reader = new Database(path, { readonly: true }) // another connection sees only what is committed
  const committed = () =>
    reader
      .query<{ text: string }, []>('SELECT text FROM notes ORDER BY id')
      .all()
      .map((r) => r.text)
  const records = sqliteRecords(db, (sql: Sql) => ({
    insert: (text: string, parent = 1) => sql.run(q`INSERT INTO notes (parent, text) VALUES (${parent}, ${text})`),
  }))
  // Today's commitGroup(db)(work) in the port's terms: the work's writes, in a transaction of the group.
  const commit = <T>(work: (insert: (text: string, parent?: number) => Promise<number>) => Promise<T>) =>
    records.transact((tx) => work(tx.insert))
  return { db, committed, commit }
}

describe('group commit', () => {
  test('writes queued in one turn share a transaction; a failing one is rolled back alone; all settle after the commit', async () => {
    const { db, committed, commit } = database('one.db')
    const seenByOthers: string[][] = []
    const settled: { text: string; inTransaction: boolean; visible: boolean }[] = []
    const after = (text: string) => (outcome: unknown) => {
      settled.push({ text, inTransaction: db.inTransaction, visible: committed().includes(text) })
      return outcome
    }
    const a = commit(async (insert) => (await insert('a'), 'A')).then(after('a'))
    const b = commit(async (insert) => {
      await insert('b')
      throw new Error('b refused') // after its own insert: that insert must not survive
    }).catch(after('b'))
    const c = commit(async (insert) => {
      await insert('c')
      seenByOthers.push(committed()) // 'a' is written but not yet committed: nobody else sees it
      return 'C'
    }).then(after('c'))
    expect(committed()).toEqual([]) // nothing runs before the turn ends
    expect(await a).toBe('A')
    expect(((await b) as Error).message).toBe('b refused')
    expect(await c).toBe('C')
    expect(seenByOthers).toEqual([[]])
    expect(committed()).toEqual(['a', 'c'])
    expect(settled).toEqual([
      { text: 'a', inTransaction: false, visible: true },
      { text: 'b', inTransaction: false, visible: false },
      { text: 'c', inTransaction: false, visible: true },
    ])
  })

  test('a commit that fails rejects every write in it and keeps none of them', async () => {
    const { db, committed, commit } = database('two.db')
    // A deferred foreign key is checked at COMMIT: the whole group's commit fails.
    const results = await Promise.allSettled([
      commit((insert) => insert('x')),
      commit((insert) => insert('orphan', 99)),
      commit((insert) => insert('y')),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(String((results[0] as PromiseRejectedResult).reason)).toContain('FOREIGN KEY')
    expect(committed()).toEqual([])
    expect(db.inTransaction).toBe(false)
    // The next group is unaffected.
    await commit((insert) => insert('z'))
    expect(committed()).toEqual(['z'])
  })

  test('writes queued in later turns get commits of their own', async () => {
    const { committed, commit } = database('three.db')
    await commit((insert) => insert('first'))
    expect(committed()).toEqual(['first'])
    await commit((insert) => insert('second'))
    expect(committed()).toEqual(['first', 'second'])
  })
})

describe('sharedRuns', () => {
  /** A run that finishes when told to, recording when it started. */
  function controlledRuns() {
    const runs: { started: number; finish: () => void; fail: (error: Error) => void }[] = []
    let clock = 0
    const run = () => new Promise<void>((resolve, reject) => runs.push({ started: clock, finish: resolve, fail: reject }))
    return { runs, run, tick: () => ++clock }
  }

  test('callers during a run share the next run, which starts only after the one in flight', async () => {
    const { runs, run, tick } = controlledRuns()
    const flush = sharedRuns(run)
    const first = flush()
    tick()
    const second = flush()
    const third = flush()
    expect(second).toBe(third)
    expect(runs.length).toBe(1) // at most one run in flight
    let secondDone = false
    second.then(() => (secondDone = true))
    runs[0]!.finish()
    await first
    await Bun.sleep(0)
    expect(runs.length).toBe(2)
    expect(runs[1]!.started).toBe(1) // started after the second caller called
    expect(secondDone).toBe(false)
    runs[1]!.finish()
    await second
    expect(secondDone).toBe(true)
    const fourth = flush() // nothing in flight: a run of its own
    expect(runs.length).toBe(3)
    runs[2]!.finish()
    await fourth
  })

  test('a failed run fails its own callers only; the next run still happens', async () => {
    const { runs, run } = controlledRuns()
    const flush = sharedRuns(run)
    const first = flush()
    const second = flush()
    runs[0]!.fail(new Error('disk'))
    await expect(first).rejects.toThrow('disk')
    await Bun.sleep(0)
    expect(runs.length).toBe(2)
    runs[1]!.finish()
    await second
  })
})
