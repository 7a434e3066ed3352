// The records port on SQLite (src/store/sqlite/records.ts) beyond the records contract (records/common.case.ts, run
// by records-contract-sqlite.test.ts), and the statements both engines run (src/store/query.ts): group commit, the
// write gate that keeps reads from seeing a group's uncommitted rows, the I/O check of tests, durability per commit,
// SQLite's errors as faults, and the rendering of queries with fragments.
import { afterEach, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join as joinPath } from 'node:path'
import { tempDir } from '../dev/server.ts'
import { join, q, render, sqlText, type Sql } from '../src/store/query.ts'
import { isUniqueViolation } from '../src/lib/store-faults.ts'
import { sqliteFault } from '../src/store/sqlite/faults.ts'
import { sqliteRecords } from '../src/store/sqlite/records.ts'

const storesOn = (sql: Sql) => ({
  items: {
    insert: (id: string, feed = 'f1') => sql.run(q`INSERT INTO items (id, feed) VALUES (${id}, ${feed})`),
    has: async (id: string) => (await sql.get<{ id: string }>(q`SELECT id FROM items WHERE id = ${id}`)) !== undefined,
    count: async () => (await sql.get<{ n: number }>(q`SELECT COUNT(*) AS n FROM items`))!.n,
    move: (feed: string, to: string) => sql.run(q`UPDATE items SET feed = ${to} WHERE feed = ${feed}`),
    synchronous: async () => (await sql.get<{ synchronous: number }>(q`PRAGMA synchronous`))!.synchronous,
  },
})

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function open(options: { assertNoIo?: boolean } = {}) {
  const dir = tempDir('trellis-records-')
  dirs.push(dir)
  const db = new Database(joinPath(dir, 'r.db'), { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, feed TEXT NOT NULL)')
  return { db, records: sqliteRecords(db, storesOn, options) }
}

describe('queries', () => {
  test('values are parameters; fragments splice in with theirs; each engine numbers its own way', () => {
    const filters = [q`feed = ${'f1'}`, q`id < ${'z'}`]
    const query = q`SELECT * FROM items WHERE ${join(filters, ' AND ')} ORDER BY id LIMIT ${10}`
    expect(render(query, '?')).toEqual({
      text: 'SELECT * FROM items WHERE feed = ? AND id < ? ORDER BY id LIMIT ?',
      values: ['f1', 'z', 10],
    })
    expect(render(query, '$')).toEqual({
      text: 'SELECT * FROM items WHERE feed = $1 AND id < $2 ORDER BY id LIMIT $3',
      values: ['f1', 'z', 10],
    })
    expect(render(q`SELECT ${1}, ${2}`, '$')).toEqual({ text: 'SELECT $1, $2', values: [1, 2] })
    expect(render(q`UPDATE items SET ${sqlText('feed')} = ${"x'); DROP TABLE items; --"}`, '?').values).toEqual([
      "x'); DROP TABLE items; --",
    ])
    expect(render(q`SELECT 1 ${join([], ' AND ')}`, '?').text).toBe('SELECT 1 ')
  })

  // A duplicate key from a transaction or a statement alone is a unique violation on both engines: the contract.
  test('a unique violation is known by its code, never by its text', () => {
    expect(isUniqueViolation(sqliteFault(new Error('UNIQUE constraint failed: items.id')))).toBe(false)
    expect(isUniqueViolation(sqliteFault(Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })))).toBe(
      true,
    )
    expect(isUniqueViolation(sqliteFault(Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })))).toBe(true)
    expect(isUniqueViolation(sqliteFault(Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT_NOTNULL' })))).toBe(false)
  })
})

describe('transactions on SQLite', () => {
  test('one that writes no row (a job with nothing to do) moves no version; one that writes a row does', async () => {
    // Every kept read is dropped when the version moves: a job finding nothing to do every few seconds emptied the memo.
    const { records } = open()
    await records.transact((tx) => tx.items.insert('a'))
    const start = records.changes.version()
    await records.transact((tx) => tx.items.move('no such feed', 'f2'))
    await Promise.all([records.single((tx) => tx.items.count()), records.transact((tx) => tx.items.move('f9', 'f1'))])
    expect(records.changes.version()).toBe(start)
    await Promise.all([records.transact((tx) => tx.items.move('f1', 'f2')), records.transact((tx) => tx.items.count())])
    expect(records.changes.version()).toBe(start + 1)
  })

  test('asked for in one turn: one commit, the version moves once; one that throws is rolled back alone', async () => {
    const { records } = open()
    const seen: number[] = []
    records.changes.onChange(() => seen.push(records.changes.version()))
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        records.transact(async (tx) => {
          await tx.items.insert(`i${i}`)
          if (i % 10 === 3) throw new Error(`refused ${i}`)
          return tx.items.count()
        }),
      ),
    )
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.message)).toEqual([
      'refused 3',
      'refused 13',
      'refused 23',
      'refused 33',
      'refused 43',
    ])
    expect(await records.read.items.count()).toBe(45)
    expect(seen).toEqual([1])
    // In later turns: groups of their own.
    await records.transact((tx) => tx.items.insert('later-1'))
    await records.transact((tx) => tx.items.insert('later-2'))
    expect(seen).toEqual([1, 2, 3])
    // A group where every transaction fails changes nothing and moves nothing.
    await records.transact((tx) => tx.items.insert('i0')).catch(() => {})
    expect(seen).toEqual([1, 2, 3])
  })

  test('no read outside a group sees its uncommitted rows (the same connection would, ungated)', async () => {
    const { db, records } = open() // without the I/O check: these transactions misbehave on purpose
    let stop = false
    let gatedSaw = 0
    let gatedReads = 0
    let ungatedSaw = 0
    const direct = db.query<{ id: string }, [string]>('SELECT id FROM items WHERE id = ?')
    const readers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        gatedReads++
        if (await records.read.items.has('doomed-1')) gatedSaw++
        await new Promise((resolve) => setImmediate(resolve))
      }
    })
    const control = (async () => {
      while (!stop) {
        if (direct.get('doomed-1') !== null) ungatedSaw++
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        records
          .transact(async (tx) => {
            await tx.items.insert(`doomed-${i % 3}`)
            await Bun.sleep(5)
            throw new Error('rolled back')
          })
          .catch(() => {}),
      ),
    )
    stop = true
    await Promise.all([...readers, control])
    expect(gatedReads).toBeGreaterThan(0)
    expect(gatedSaw).toBe(0)
    expect(ungatedSaw).toBeGreaterThan(0) // the gate is what keeps them out
    expect(await records.read.items.count()).toBe(0)
  })

  test('with the I/O check (tests), a transaction that awaits anything but its tx fails loudly and keeps nothing', async () => {
    const { records } = open({ assertNoIo: true })
    const [slow, fine] = await Promise.allSettled([
      records.transact(async (tx) => {
        await tx.items.insert('slow')
        await Bun.sleep(1)
      }),
      records.transact((tx) => tx.items.insert('fine')),
    ])
    expect(slow.status).toBe('rejected')
    expect((slow as PromiseRejectedResult).reason.message).toContain('I/O inside a transaction')
    expect(fine.status).toBe('fulfilled')
    expect(await records.read.items.has('slow')).toBe(false)
    expect(await records.read.items.has('fine')).toBe(true)
    // Statements only: many awaits in a row are fine.
    expect(
      await records.transact(async (tx) => {
        for (let i = 0; i < 100; i++) await tx.items.insert(`many-${i}`)
        return tx.items.count()
      }),
    ).toBe(101)
  })

  test('a statement on a transaction that has ended is refused', async () => {
    const { records } = open()
    let kept: Parameters<Parameters<typeof records.transact>[0]>[0] | null = null
    await records.transact(async (tx) => void (kept = tx))
    await expect(kept!.items.insert('late')).rejects.toThrow('after its transaction ended')
    expect(await records.read.items.has('late')).toBe(false)
  })

  test('lazy durability: a group of lazy transactions commits without fsync; one durable transaction makes it FULL', async () => {
    const { records } = open()
    expect(await records.transact((tx) => tx.items.synchronous(), { durability: 'lazy' })).toBe(1) // NORMAL
    const [lazy, full] = await Promise.all([
      records.transact((tx) => tx.items.synchronous(), { durability: 'lazy' }),
      records.transact((tx) => tx.items.synchronous()),
    ])
    expect([lazy, full]).toEqual([2, 2])
    expect(await records.read.items.synchronous()).toBe(2) // FULL again after
  })

  test('close waits for the groups asked for', async () => {
    const { db, records } = open()
    const writes = Array.from({ length: 5 }, (_, i) => records.transact((tx) => tx.items.insert(`c${i}`)))
    await records.close()
    await Promise.all(writes)
    const reopened = new Database(db.filename, { strict: true })
    expect(reopened.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM items').get()!.n).toBe(5)
    reopened.close()
  })
})
