// The records port on a real PostgreSQL (src/store/postgres/records.ts) beyond the records contract
// (records/common.case.ts, run by records-contract-postgres.test.ts in the PostgreSQL pass): commits and rollbacks
// per concurrent transaction, the version per commit, a transaction PostgreSQL gives up to break a deadlock run
// again, and lazy durability only where asked.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { q, type Sql } from '../src/store/query.ts'
import { postgresRecords } from '../src/store/postgres/records.ts'
import { TEST_POSTGRES } from '../dev/test-database.ts'

// The PostgreSQL records adapter on a cluster of its own: run once, in the PostgreSQL pass.
describe.skipIf(!TEST_POSTGRES)('the PostgreSQL records adapter on a cluster of its own', () => {
  const storesOn = (sql: Sql) => ({
    items: {
      insert: (id: string, n = 0) => sql.run(q`INSERT INTO items (id, n) VALUES (${id}, ${n})`),
      add: (id: string, by: number) => sql.run(q`UPDATE items SET n = n + ${by} WHERE id = ${id}`),
      n: async (id: string) => Number((await sql.get<{ n: string }>(q`SELECT n FROM items WHERE id = ${id}`))?.n),
      count: async () => Number((await sql.get<{ c: string }>(q`SELECT COUNT(*) AS c FROM items`))!.c),
      synchronousCommit: async () => (await sql.get<{ synchronous_commit: string }>(q`SHOW synchronous_commit`))!.synchronous_commit,
    },
  })

  let postgres: Postgres
  const opened: { close(): Promise<void> }[] = []
  const open = (max = 8) => {
    const records = postgresRecords(new SQL(postgres.adminUrl, { max }), storesOn)
    opened.push(records)
    return records
  }

  beforeAll(async () => {
    postgres = await startPostgres()
    const admin = new SQL(postgres.adminUrl, { max: 1 })
    await admin.unsafe('CREATE TABLE items (id text PRIMARY KEY, n bigint NOT NULL)')
    await admin.close()
  })
  afterAll(async () => {
    for (const records of opened) await records.close()
    await postgres?.stop()
  })

  describe('transactions on PostgreSQL', () => {
    test('each commits or rolls back alone; the version moves once per commit', async () => {
      const records = open()
      const seen: number[] = []
      records.changes.onChange(() => seen.push(records.changes.version()))
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          records.transact(async (tx) => {
            await tx.items.insert(`c${i}`)
            if (i % 5 === 2) throw new Error(`refused ${i}`)
          }),
        ),
      )
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .map((r) => (r as PromiseRejectedResult).reason.message)
          .sort(),
      ).toEqual(['refused 12', 'refused 17', 'refused 2', 'refused 7'])
      expect(await records.read.items.count()).toBe(16)
      expect(seen).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    })

    test('a deadlock PostgreSQL breaks is run again: both transactions land, each once', async () => {
      const records = open()
      await records.transact(async (tx) => {
        await tx.items.insert('d1')
        await tx.items.insert('d2')
      })
      // Each holds one row and then asks for the other's: PostgreSQL aborts one (40P01), which runs again.
      let arrived = 0
      let meet!: () => void
      const bothHoldOne = new Promise<void>((resolve) => (meet = resolve))
      const attempts = { a: 0, b: 0 }
      const crossing = (first: string, second: string, who: 'a' | 'b') =>
        records.transact(async (tx) => {
          attempts[who]++
          await tx.items.add(first, 1)
          if (attempts[who] === 1) {
            if (++arrived === 2) meet()
            await bothHoldOne
          }
          await tx.items.add(second, 1)
        })
      await Promise.all([crossing('d1', 'd2', 'a'), crossing('d2', 'd1', 'b')])
      expect([await records.read.items.n('d1'), await records.read.items.n('d2')]).toEqual([2, 2])
      // One of them ran again; under load the retry can cross the other once more (it may take the row back before the
      // survivor's woken lock request does), and each deadlock costs exactly one more attempt: at least three.
      expect(attempts.a + attempts.b).toBeGreaterThanOrEqual(3)
    }, 20_000)

    test('lazy durability holds for its own transaction only', async () => {
      const records = open()
      expect(await records.transact((tx) => tx.items.synchronousCommit(), { durability: 'lazy' })).toBe('off')
      expect(await records.transact((tx) => tx.items.synchronousCommit())).toBe('on')
      expect(await records.read.items.synchronousCommit()).toBe('on')
    })
  })
})
