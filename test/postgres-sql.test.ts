// The statements of store/query.ts on a real PostgreSQL (a throwaway cluster, dev/postgres.ts): one SQL text per
// statement, as the SQLite adapter runs it, with $n placeholders, fragments, money beyond 2^64 as NUMERIC(78,0), and a
// unique violation known by its SQLSTATE.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { join, q } from '../src/store/query.ts'
import { isUniqueViolation } from '../src/lib/store-faults.ts'
import { postgresSql } from '../src/store/postgres/sql.ts'

let postgres: Postgres
let client: SQL

beforeAll(async () => {
  postgres = await startPostgres()
  client = new SQL(postgres.adminUrl, { max: 4 })
  await client.unsafe('CREATE TABLE items (id text PRIMARY KEY, feed text NOT NULL, amount numeric(78,0) NOT NULL, at bigint NOT NULL)')
})
afterAll(async () => {
  await client?.close()
  await postgres?.stop()
})

test('the same statements as on SQLite: parameters, fragments, changed-row counts, money past 2^64 exact', async () => {
  const sql = postgresSql(client)
  const huge = 2n ** 200n + 7n
  expect(
    await sql.run(
      q`INSERT INTO items (id, feed, amount, at) VALUES (${'a'}, ${'f1'}, ${huge}, ${1_790_000_000}), (${'b'}, ${'f1'}, ${5n}, ${2})`,
    ),
  ).toBe(2)
  expect(await sql.run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'c'}, ${'f2'}, ${1n}, ${3})`)).toBe(1)
  const filters = [q`feed = ${'f1'}`, q`id < ${'z'}`]
  const rows = await sql.all<{ id: string; amount: string; at: string }>(
    q`SELECT id, CAST(amount AS TEXT) AS amount, at FROM items WHERE ${join(filters, ' AND ')} ORDER BY id LIMIT ${10}`,
  )
  expect(rows.map((r) => [r.id, BigInt(r.amount), Number(r.at)])).toEqual([
    ['a', huge, 1_790_000_000],
    ['b', 5n, 2],
  ])
  expect((await sql.get<{ total: string }>(q`SELECT CAST(SUM(amount) AS TEXT) AS total FROM items`))!.total).toBe((huge + 6n).toString())
  expect(await sql.get(q`SELECT id FROM items WHERE id = ${'none'}`)).toBeUndefined()
  expect(await sql.run(q`UPDATE items SET at = at + 1 WHERE feed = ${'f1'}`)).toBe(2)
  expect(await sql.run(q`DELETE FROM items WHERE id = ${'none'}`)).toBe(0)
  // A value is never text of the statement.
  expect(await sql.run(q`UPDATE items SET feed = ${"x'; DROP TABLE items; --"} WHERE id = ${'c'}`)).toBe(1)
  expect((await sql.get<{ feed: string }>(q`SELECT feed FROM items WHERE id = ${'c'}`))!.feed).toBe("x'; DROP TABLE items; --")
})

test('a unique violation is known by its SQLSTATE; ON CONFLICT DO NOTHING says it changed nothing', async () => {
  const sql = postgresSql(client)
  await sql.run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'u'}, ${'f'}, ${1n}, ${1})`)
  const error = await sql.run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'u'}, ${'f'}, ${1n}, ${1})`).catch((e: unknown) => e)
  expect(isUniqueViolation(error)).toBe(true)
  expect(isUniqueViolation(new Error('duplicate key value violates unique constraint'))).toBe(false)
  expect(await sql.run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'u'}, ${'f'}, ${1n}, ${1}) ON CONFLICT DO NOTHING`)).toBe(0)
})

test('inside a transaction: all of it commits, or none', async () => {
  await client.begin(async (tx) => {
    await postgresSql(tx).run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'t1'}, ${'t'}, ${1n}, ${1})`)
  })
  const failed = await client
    .begin(async (tx) => {
      await postgresSql(tx).run(q`INSERT INTO items (id, feed, amount, at) VALUES (${'t2'}, ${'t'}, ${1n}, ${1})`)
      throw new Error('refused')
    })
    .catch((e: Error) => e.message)
  expect(failed).toBe('refused')
  const ids = await postgresSql(client).all<{ id: string }>(q`SELECT id FROM items WHERE feed = ${'t'} ORDER BY id`)
  expect(ids.map((r) => r.id)).toEqual(['t1'])
})
