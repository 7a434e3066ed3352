// Migration 021 (issue 37): a payment sells an entry or a feed's pass, never both and never neither; one pending
// payment per purchase of a pass, as of an entry. On SQLite the step makes payments again (entry_id's NOT NULL cannot
// be dropped in place): every row, index and foreign key is kept. On each engine, through its own SQL.
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openRecords } from '../src/store/open.ts'
import { TEST_POSTGRES, testDatabase } from '../dev/test-database.ts'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Statements of one engine: `run` answers the rows changed, or throws what the engine refused. */
interface Raw {
  run(text: string, ...values: unknown[]): Promise<number>
  rows(text: string): Promise<Record<string, unknown>[]>
}

const FEED = "INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at) VALUES ('w', '0xA', '0xa', 'n', 1, 1)"
const FEED2 = "INSERT INTO feeds (id, owner_id, name, created_at, updated_at) VALUES ('f', 'w', 'feed', 1, 1)"
const ENTRY =
  'INSERT INTO entries (id, feed_id, cid, size, mime_type, is_free, price, created_at, updated_at) ' +
  "VALUES ('e', 'f', 'bafk', 1, 'text/plain', 0, 5, 1, 1)"
const text = (value: string | null) => (value === null ? 'NULL' : `'${value}'`)
// Every payment names its network (028: an authorization is one per network, as the server writes them all).
const payment = (
  id: string,
  nonce: string,
  entry: string | null,
  feed: string | null,
  duration: number | null,
  status = 'pending',
  network = 'base-sepolia',
) =>
  'INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before, status, ' +
  `created_at, updated_at, pass_feed_id, pass_duration_s, network) VALUES ('${id}', '0xb', '${nonce}', ${text(entry)}, '0xA', 5, 2, ` +
  `'{}', '{}', 100, '${status}', 1, 1, ${text(feed)}, ${duration ?? 'NULL'}, '${network}')`

async function rules(raw: Raw) {
  for (const statement of [FEED, FEED2, ENTRY]) await raw.run(statement)
  expect(await raw.run(payment('p1', 'n1', 'e', null, null))).toBe(1) // an entry
  expect(await raw.run(payment('p2', 'n2', null, 'f', 3600))).toBe(1) // a pass, with its duration
  await expect(raw.run(payment('p3', 'n3', 'e', 'f', 3600))).rejects.toThrow() // both
  await expect(raw.run(payment('p4', 'n4', null, null, null))).rejects.toThrow() // neither
  await expect(raw.run(payment('p5', 'n5', null, 'f', null))).rejects.toThrow() // a pass without its terms
  await expect(raw.run(payment('p6', 'n6', null, 'f', 60))).rejects.toThrow() // a second pending pass purchase
  expect(await raw.run(payment('p7', 'n7', null, 'f', 60, 'failed'))).toBe(1) // a failed one beside it
  await expect(raw.run(payment('p8', 'n1', null, 'f', 60, 'failed'))).rejects.toThrow() // an authorization twice
  expect(await raw.run(payment('p9', 'n1', null, 'f', 60, 'failed', 'polygon-amoy'))).toBe(1) // its nonce on another chain
}

describe('the embedded engine', () => {
  // Its rows kept: tallies-parity.test.ts migrates markets written at schema 4 and 5 and compares every table.
  test('021 makes payments again: indexes and foreign keys kept; the rules of what a payment sells', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-021-'))
    dirs.push(dir)
    await (await openRecords({ engine: 'sqlite', dataDir: dir }, 'migrate')).close()
    const db = new Database(join(dir, 'trellis.db'))
    db.exec('PRAGMA foreign_keys = ON')
    const raw: Raw = {
      run: async (text) => db.query(text).run().changes,
      rows: async (text) => db.query(text).all() as Record<string, unknown>[],
    }
    await rules(raw)
    const indexes = (await raw.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'payments' AND sql IS NOT NULL"))
      .map((r) => r.name)
      .sort()
    expect(indexes).toEqual(['payments_one_pending_pass', 'payments_one_pending_purchase', 'payments_pending'])
    expect(await raw.rows('PRAGMA foreign_key_check')).toEqual([])
    // A ledger row still names its payment: the reference follows the table made again.
    const sql = (await raw.rows("SELECT sql FROM sqlite_schema WHERE name = 'transactions'"))[0]!.sql as string
    expect(sql).toContain('REFERENCES payments (id)')
    await expect(
      raw.run(
        'INSERT INTO transactions (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, transaction_hash, created_at) ' +
          "VALUES ('t', 'nope', '0xb', '0xb', '0xA', '0xa', 5, 'USDC', '0x1', 1)",
      ),
    ).rejects.toThrow()
    db.close()
  })
})

describe.skipIf(!TEST_POSTGRES)('PostgreSQL', () => {
  test('the rules of what a payment sells', async () => {
    const database = (await testDatabase())!
    try {
      await (await openRecords({ engine: 'postgres', url: database.url, directUrl: database.directUrl, pool: 2 }, 'current')).close()
      const sql = new SQL(database.directUrl ?? database.url, { max: 1 })
      try {
        await rules({ run: async (text) => (await sql.unsafe(text)).count, rows: (text) => sql.unsafe(text) })
      } finally {
        await sql.close()
      }
    } finally {
      await database.drop()
    }
  })
})
