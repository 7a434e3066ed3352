// The triggers of both engines keep the same tallies: one market (wallets, feeds, entries, sales through the stores'
// own statements; repeat buyers, sales on one day and on several, out of order in time, a self-purchase, a payer
// without a wallet, a ledger row without an entry, tags added, changed and removed, entries and feeds withdrawn and
// restored) written on SQLite and on PostgreSQL leaves every table holding the same rows. So does a market written
// while the schema was older, then migrated (005's backfill; 005's own triggers). On PostgreSQL alone: purchases
// racing in both directions between two addresses neither deadlock nor miscount, and money past 2^64 sums exactly.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { MIGRATIONS, POSTGRES_MIGRATIONS } from '../src/store/migrations/index.ts'
import { openDb } from '../src/store/sqlite/database.ts'
import { sqliteRecords } from '../src/store/sqlite/records.ts'
import { postgresRecords } from '../src/store/postgres/records.ts'
import { postgresSql } from '../src/store/postgres/sql.ts'
import { migratePostgres } from '../src/store/postgres/migrate.ts'
import { sharedStores, type Stores } from '../src/store/stores.ts'
import { postgresStores } from '../src/store/postgres/stores.ts'
import { q, type Sql } from '../src/store/query.ts'
import type { Records } from '../src/store/records.ts'
import { entrySold, type NewPayment } from '../src/store/payments.ts'

const DAY = 86_400
const T0 = 1_790_000_000 + 5_000 // not on a day boundary
const BIG = 123_456_789_012_345_678n // past 2^53: a float anywhere would show

/** The stores, and the statements under them for what no store writes any more (rows of an older schema). */
type Tx = Stores & { sql: Sql }
const withSql =
  (storesOn: (sql: Sql) => Stores) =>
  (sql: Sql): Tx => ({ ...storesOn(sql), sql })

const address = (digit: string) => `0x${digit.repeat(4).toUpperCase()}${digit.repeat(36)}` // mixed case, as EIP-55 addresses are
const A = address('a'),
  B = address('b'),
  C = address('c'),
  D = address('d'),
  X = address('e') // X pays without a wallet
const WALLETS: [string, string][] = [
  ['w-a', A],
  ['w-b', B],
  ['w-c', C],
  ['w-d', D],
]
const walletOf = (who: string) => WALLETS.find(([, a]) => a === who)?.[0]

/** Rows of an engine's tables, each value as text (bigint, numeric and smallint alike), bytes as hex, in a fixed order. */
type Rows = Record<string, Record<string, string | null>[]>
const text = (value: unknown) =>
  value === null || value === undefined ? null : value instanceof Uint8Array ? Buffer.from(value).toString('hex') : String(value)
function normalised(rows: Record<string, unknown>[]): Record<string, string | null>[] {
  const out = rows.map((row) =>
    Object.fromEntries(
      Object.keys(row)
        .sort()
        .map((k) => [k, text(row[k])]),
    ),
  )
  return out.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
}
const TABLES = (db: Database) =>
  db
    .query<{ name: string }, []>(
      // The full-text index (search_fts and its shadow tables) is SQLite's own index of search_docs: no rows to compare.
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' " +
        "AND name NOT LIKE 'search_fts%'",
    )
    .all()
    .map((t) => t.name)

function sqliteRows(path: string): Rows {
  const db = new Database(path, { readonly: true, safeIntegers: true })
  const rows = Object.fromEntries(
    TABLES(db).map((table) => [table, normalised(db.query(`SELECT * FROM ${table}`).all() as Record<string, unknown>[])]),
  )
  db.close()
  return rows
}
async function postgresRows(sql: SQL, tables: string[]): Promise<Rows> {
  const rows: Rows = {}
  for (const table of tables) rows[table] = normalised(await sql.unsafe(`SELECT * FROM ${table}`))
  return rows
}

/** Every table the same on both (but those named in `except`); the derived ones not empty (the market reached them). */
function expectSameRows(sqlite: Rows, pg: Rows, except: string[] = []) {
  expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort())
  for (const table of Object.keys(sqlite))
    if (!except.includes(table) && table !== 'search_docs') expect(pg[table], table).toEqual(sqlite[table]!)
  // A search document's key is random, and PostgreSQL keeps its tsvector beside it: the words must agree.
  const words = (rows: Rows) => (rows.search_docs ?? []).map(({ doc: _, document: __, ...words }) => JSON.stringify(words)).sort()
  expect(words(pg)).toEqual(words(sqlite))
  for (const table of [
    'feed_days',
    'buyer_days',
    'feed_buyers',
    'entry_buyers',
    'address_pairs',
    'address_days',
    'address_totals',
    'ledger_totals',
    'feed_tags',
  ]) {
    expect(sqlite[table]!.length, table).toBeGreaterThan(0)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The market. `era`: 'current' writes through today's stores; 'old' writes what a database of schema 4 or 5 could
// hold (no content keys, no images; several pending payments of one purchase, as before 009).

interface Sale {
  id: string
  payer: string
  payTo: string
  entry: string | null
  amount: bigint
  at: number
  payment?: string
}

/** A sale as each era's Trellis recorded it (before 019, no kind and no feed_id on the ledger row). */
async function sell(tx: Tx, s: Sale, era: 'current' | 'old' = 'current') {
  const hash = `0x${Buffer.from(s.id).toString('hex').padStart(64, '0')}`
  if (era === 'current')
    await tx.transactions.insert({
      id: s.id,
      piid: s.payment ?? null,
      payer: s.payer,
      pay_to: s.payTo,
      amount: s.amount,
      asset: 'USDC',
      entry_id: s.entry,
      transaction_hash: hash,
      created_at: s.at,
      kind: 'entry',
      feed_id: s.entry ? (await tx.entries.byId(s.entry))!.feed_id : null,
      network: 'base-sepolia',
    })
  else
    await tx.sql.run(q`INSERT INTO transactions (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id, transaction_hash,
      created_at) VALUES (${s.id}, ${s.payment ?? null}, ${s.payer}, ${s.payer.toLowerCase()}, ${s.payTo}, ${s.payTo.toLowerCase()},
      ${s.amount}, 'USDC', ${s.entry}, ${hash}, ${s.at})`)
  if (s.entry) await tx.purchases.addToTotals(s.entry, s.amount)
  const wallet = walletOf(s.payer)
  if (wallet && s.entry) await tx.purchases.grant(wallet, s.entry, s.id, s.at)
}

/** A pending payment as each era's Trellis wrote it (before 012, no settler). */
async function insertPending(tx: Tx, era: 'current' | 'old', p: NewPayment): Promise<boolean> {
  if (era === 'current') return tx.payments.insertPending(p)
  return (
    (await tx.sql.run(q`INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements,
      valid_before, submitted_block, status, created_at, updated_at)
    VALUES (${p.id}, ${p.payer_lc}, ${p.nonce}, ${p.sold.entry_id}, ${p.pay_to}, ${p.amount}, ${p.x402_version}, ${p.payload},
      ${p.requirements}, ${p.valid_before}, ${p.submitted_block}, 'pending', ${p.now}, ${p.now})`)) === 1
  )
}

async function addEntry(tx: Tx, era: 'current' | 'old', e: { id: string; feed: string; price: bigint; at: number; key?: Uint8Array }) {
  const free = e.price === 0n
  if (era === 'current') {
    const added = await tx.entries.add(
      {
        id: e.id,
        feed_id: e.feed,
        cid: `bafk-${e.id}`,
        size: 10,
        mime_type: 'text/plain',
        title: e.id,
        description: null,
        metadata: null,
        tags: ['x'],
        is_free: free,
        price: e.price,
        expires_at: free ? null : e.at + 30 * DAY,
        content_key: e.key ?? null,
        now: e.at,
      },
      1000,
    )
    if (typeof added === 'string') throw new Error(`no slot in ${e.feed} (${added})`)
  } else {
    await tx.sql.run(q`UPDATE feeds SET total_entries = total_entries + 1 WHERE id = ${e.feed}`)
    await tx.sql.run(q`INSERT INTO entries
      (id, feed_id, cid, size, mime_type, title, description, metadata, tags, is_free, price, expires_at, created_at, updated_at)
      VALUES (${e.id}, ${e.feed}, ${`bafk-${e.id}`}, ${10}, ${'text/plain'}, ${e.id}, ${null}, ${null}, ${'["x"]'}, ${free ? 1 : 0},
      ${e.price}, ${free ? null : e.at + 30 * DAY}, ${e.at}, ${e.at})`)
  }
}

async function market(records: Records<Tx>, era: 'current' | 'old') {
  await records.transact(async (tx) => {
    await tx.categories.insert({ id: 'cat-news', name: 'News', description: null, icon_url: null, now: T0 - 9 * DAY })
    for (const [i, [id, who]] of WALLETS.entries()) await tx.wallets.ensure(id, who, 'base-sepolia', T0 - 8 * DAY + i)
    await tx.wallets.update('w-c', { username: 'Carol' }, T0 - 8 * DAY)
  })
  // A publishes two feeds on one day, B one later; entries on other days (each a day of activity of the owner).
  const feeds: [string, string, string | null, string[], number][] = [
    ['f-1', 'w-a', 'cat-news', ['News', 'AI'], T0 - 5 * DAY],
    ['f-2', 'w-a', null, [], T0 - 5 * DAY + 60],
    ['f-3', 'w-b', 'cat-news', ['ai', 'Zeta', 'zeta'], T0 - 3 * DAY],
  ]
  for (const [id, owner, category, tags, at] of feeds) {
    await records.transact(async (tx) => {
      await tx.feeds.lockOwner(owner)
      const feed = { id, owner_id: owner, category_id: category, name: id, description: null, image_cid: null, tags, now: at }
      if (era === 'current') await tx.feeds.insert(feed)
      // Before 024, no search document.
      else
        await tx.sql.run(q`INSERT INTO feeds (id, owner_id, category_id, name, description, image_cid, tags, created_at, updated_at)
          VALUES (${id}, ${owner}, ${category}, ${id}, ${null}, ${null}, ${JSON.stringify(tags)}, ${at}, ${at})`)
    })
  }
  await records.transact(async (tx) => {
    await addEntry(tx, era, { id: 'e-1', feed: 'f-1', price: BIG, at: T0 - 4 * DAY, key: new Uint8Array([1, 2, 3, 255]) })
    await addEntry(tx, era, { id: 'e-2', feed: 'f-1', price: BIG + 1n, at: T0 - 4 * DAY + 10 })
    await addEntry(tx, era, { id: 'e-3', feed: 'f-2', price: 7n, at: T0 - 2 * DAY })
    await addEntry(tx, era, { id: 'e-4', feed: 'f-3', price: 2n * BIG, at: T0 - 2 * DAY + 5 })
    await addEntry(tx, era, { id: 'e-free', feed: 'f-3', price: 0n, at: T0 - 2 * DAY + 6 })
  })

  const sales: Sale[] = [
    { id: 's-01', payer: C, payTo: A, entry: 'e-1', amount: BIG, at: T0 + 100 },
    { id: 's-02', payer: C, payTo: A, entry: 'e-2', amount: BIG + 1n, at: T0 + 200 }, // same day, same feed, another entry
    { id: 's-03', payer: D, payTo: A, entry: 'e-1', amount: BIG, at: T0 + 300 },
    { id: 's-04', payer: C, payTo: A, entry: 'e-1', amount: BIG, at: T0 + DAY + 50 }, // a repeat buyer, the next day
    { id: 's-05', payer: B, payTo: A, entry: 'e-1', amount: BIG, at: T0 + DAY + 60 }, // a seller buys from another
    { id: 's-06', payer: A, payTo: B, entry: 'e-4', amount: 2n * BIG, at: T0 + DAY + 70 }, // and the other way round
    { id: 's-07', payer: A, payTo: A, entry: 'e-1', amount: BIG, at: T0 + 2 * DAY }, // a self-purchase
    { id: 's-08', payer: X, payTo: B, entry: 'e-4', amount: 2n * BIG, at: T0 + 2 * DAY + 5 }, // no wallet, no grant
    { id: 's-09', payer: C, payTo: A, entry: 'e-3', amount: 7n, at: T0 + 30 }, // earlier than what came before it
    { id: 's-10', payer: D, payTo: B, entry: null, amount: 5n, at: T0 + 3 * DAY }, // a ledger row of no entry
    { id: 's-11', payer: D, payTo: B, entry: 'e-4', amount: 2n * BIG, at: T0 + 3 * DAY + 10, payment: 'p-1' },
  ]
  for (const s of sales) {
    await records.transact(async (tx) => {
      if (s.payment) {
        const made = await insertPending(tx, era, {
          id: s.payment,
          payer_lc: s.payer.toLowerCase(),
          nonce: `0x${'1'.repeat(64)}`,
          sold: entrySold(s.entry!),
          pay_to: s.payTo,
          amount: s.amount,
          x402_version: 2,
          payload: '{}',
          requirements: '{}',
          valid_before: s.at + 600,
          submitted_block: 100,
          settler: 'parity',
          network: 'base-sepolia',
          now: s.at,
        })
        expect(made).toBe(true)
        expect(await tx.payments.markSettled(s.payment, `0x${'2'.repeat(64)}`, 101, s.at)).toBe(true)
      }
      await sell(tx, s, era)
    })
  }
  if (era === 'old') {
    // Pending together, as an older Trellis could leave them: 009 numbers them by age, then id.
    await records.transact(async (tx) => {
      for (const [id, nonce, at] of [
        ['p-3', '3', T0 + 5],
        ['p-2', '4', T0 + 5],
        ['p-4', '5', T0 + 1],
      ] as const) {
        await insertPending(tx, era, {
          id,
          payer_lc: D.toLowerCase(),
          nonce: `0x${nonce.repeat(64)}`,
          sold: entrySold('e-2'),
          pay_to: A,
          amount: BIG + 1n,
          x402_version: 2,
          payload: '{}',
          requirements: '{}',
          valid_before: at + 600,
          submitted_block: 100,
          settler: 'parity',
          network: 'base-sepolia',
          now: at,
        })
      }
    })
  }

  // Tags changed, removed, set again unchanged; a patch without tags. Before 024 a feed had no search document to update.
  const update = (tx: Tx, id: string, patch: { tags?: string[]; name?: string }, at: number) =>
    era === 'current'
      ? tx.feeds.update(id, patch, at)
      : patch.tags
        ? tx.sql.run(q`UPDATE feeds SET tags = ${JSON.stringify(patch.tags)}, updated_at = ${at} WHERE id = ${id}`)
        : tx.sql.run(q`UPDATE feeds SET name = ${patch.name!}, updated_at = ${at} WHERE id = ${id}`)
  await records.transact(async (tx) => {
    await update(tx, 'f-1', { tags: ['ai', 'Robots'] }, T0 + 4 * DAY)
    await update(tx, 'f-3', { tags: [] }, T0 + 4 * DAY)
    await update(tx, 'f-2', { name: 'renamed' }, T0 + 4 * DAY)
    await update(tx, 'f-2', { tags: [] }, T0 + 4 * DAY)
  })
  // Withdrawn and restored: the ledger's tallies stay.
  await records.transact(async (tx) => {
    expect(await tx.entries.deactivate('e-2', 'f-1', T0 + 5 * DAY)).toBe(true)
    await tx.entries.deactivateAllIn('f-2', T0 + 5 * DAY)
    await tx.feeds.update('f-2', { is_active: false }, T0 + 5 * DAY)
  })
  await records.transact(async (tx) => {
    if (era === 'current') await tx.entries.reactivateAllIn('f-2', T0 + 6 * DAY)
    else {
      // As before 013 (no taken_down yet).
      await tx.sql.run(
        q`UPDATE entries SET is_active = 1, deactivated_with_feed = 0, updated_at = ${T0 + 6 * DAY}
          WHERE feed_id = 'f-2' AND deactivated_with_feed = 1`,
      )
      await tx.sql.run(
        q`UPDATE feeds SET total_entries = (SELECT COUNT(*) FROM entries WHERE feed_id = 'f-2' AND is_active = 1) WHERE id = 'f-2'`,
      )
    }
    await tx.feeds.update('f-2', { is_active: true }, T0 + 6 * DAY)
  })

  if (era === 'current') {
    await records.transact(async (tx) => {
      await tx.images.record({ cid: 'bafk-cover', mime_type: 'image/png', size: 99, created_at: T0 })
      await tx.meta.set('ledger_checked', 's-05')
      await tx.meta.set('ledger_checked', 's-11')
      await tx.accessLinks.insert({
        id: 'l-1',
        entry_id: 'e-1',
        feed_id: 'f-1',
        created_by: A.toLowerCase(),
        expires_at: T0 + 9 * DAY,
        max_uses: 1,
        description: null,
        now: T0,
      })
      expect(await tx.accessLinks.use('l-1', T0 + 1)).toBe(true)
      expect(await tx.accessLinks.use('l-1', T0 + 2)).toBe(false)
    })
    await records.transact(
      async (tx) => {
        await tx.nonces.insert({ nonce: 'n-1', address_lc: C.toLowerCase(), message: 'sign', expires_at: T0 + 300 })
        expect(await tx.nonces.consume({ nonce: 'n-1', addressLc: C.toLowerCase(), message: 'sign', expiresAt: T0 + 300 }, T0 + 1)).toBe(
          true,
        )
      },
      { durability: 'lazy' },
    )
  }
}

// ---------------------------------------------------------------------------------------------------------------

let postgres: Postgres
let admin: SQL
let dir: string
const closing: { close(): Promise<void> }[] = []

async function freshDatabase(name: string): Promise<string> {
  await admin.unsafe(`CREATE DATABASE ${name}`)
  return postgres.urlOf(name)
}
const sqliteOn = (db: Database): Records<Tx> => {
  const records = sqliteRecords(db, withSql(sharedStores))
  closing.push(records)
  return records
}
const postgresOn = (url: string, max = 4): { sql: SQL; records: Records<Tx> } => {
  const sql = new SQL(url, { max })
  const records = postgresRecords(sql, withSql(postgresStores))
  closing.push(records)
  return { sql, records }
}

beforeAll(async () => {
  postgres = await startPostgres()
  admin = new SQL(postgres.adminUrl, { max: 1 })
  dir = mkdtempSync(join(tmpdir(), 'trellis-tallies-parity-'))
})
afterAll(async () => {
  for (const c of closing) await c.close().catch(() => {})
  await admin?.close()
  await postgres?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('one market on both engines', () => {
  test('written through the stores: every table holds the same rows', async () => {
    const path = join(dir, 'current.db')
    const sqlite = sqliteOn(openDb(path))
    await market(sqlite, 'current')
    const url = await freshDatabase('current')
    const pg = postgresOn(url)
    await migratePostgres(pg.sql, 'current')
    await market(pg.records, 'current')
    const rows = sqliteRows(path)
    expectSameRows(rows, await postgresRows(pg.sql, Object.keys(rows)))
    // A few figures spelled out, so a fault common to both engines shows too.
    const totals = Object.fromEntries(rows.address_totals!.map((r) => [r.address_lc, r]))
    expect(totals[A.toLowerCase()]).toMatchObject({
      sold: '7',
      buyers: '4',
      bought: '2',
      sellers: '2',
      feeds_bought_from: '2',
      entries_bought: '2',
    })
    expect(totals[X.toLowerCase()]).toMatchObject({
      bought: '1',
      spent: String(2n * BIG),
      active_days: '1',
      first_at: String(T0 + 2 * DAY + 5),
    })
    expect(totals[C.toLowerCase()]).toMatchObject({
      first_at: String(T0 + 30),
      last_at: String(T0 + DAY + 50),
      feeds_bought_from: '2',
      entries_bought: '3',
    })
    expect(rows.ledger_totals).toEqual([{ id: '1', transactions: '11', revenue: String(12n * BIG + 1n + 7n + 5n) }])
    expect(rows.feed_tags!.map((t) => `${t.feed_id}:${t.tag_lc}`)).toEqual(['f-1:ai', 'f-1:robots'])
  })

  for (const version of [4, 5]) {
    test(
      `written at schema ${version}, then migrated: the same rows ` + `(${version === 4 ? "005's backfill" : "005's own triggers"})`,
      async () => {
        const path = join(dir, `old-${version}.db`)
        const old = new Database(path, { create: true, strict: true })
        old.exec('PRAGMA journal_mode = WAL')
        old.exec('PRAGMA foreign_keys = ON')
        old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
        for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
          old.exec(m.sql)
          old.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)').run(m.version, m.name)
        }
        const sqlite = sqliteRecords(old, withSql(sharedStores))
        await market(sqlite, 'old')
        await sqlite.close()
        openDb(path).close() // migrated the rest of the way

        const url = await freshDatabase(`old_${version}`)
        const setup = new SQL(url, { max: 1 })
        await setup.unsafe('CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)')
        for (const m of POSTGRES_MIGRATIONS.filter((m) => m.version <= version)) {
          await setup.begin(async (tx) => {
            await tx.unsafe(m.sql).simple()
            await tx.unsafe('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)', [m.version, m.name])
          })
        }
        await setup.close()
        const pg = postgresOn(url)
        await market(pg.records, 'old')
        expect(await migratePostgres(pg.sql, `old_${version}`)).toBe(POSTGRES_MIGRATIONS.filter((m) => m.version > version).length)

        const rows = sqliteRows(path)
        expectSameRows(rows, await postgresRows(pg.sql, Object.keys(rows)))
        expect(
          rows
            .payments!.filter((p) => p.status === 'pending')
            .map((p) => `${p.id}:${p.pending_slot}`)
            .sort(),
        ).toEqual(['p-2:1', 'p-3:2', 'p-4:0'])
      },
    )
  }
})

describe('PostgreSQL under concurrency', () => {
  test(
    '8 connections × 50 purchases between two addresses, both ways at once: no deadlock, and the ' + 'same tallies as one writer gives',
    async () => {
      const path = join(dir, 'race.db')
      const sqlite = sqliteOn(openDb(path))
      const url = await freshDatabase('race')
      const pg = postgresOn(url)
      await migratePostgres(pg.sql, 'race')
      // Two fresh wallets, each selling one entry.
      const setUp = async (records: Records<Tx>) => {
        await records.transact(async (tx) => {
          for (const [id, who] of [
            ['w-a', A],
            ['w-b', B],
          ])
            await tx.wallets.ensure(id!, who!, 'base-sepolia', T0 - DAY)
          await tx.feeds.insert({
            id: 'f-a',
            owner_id: 'w-a',
            category_id: null,
            name: 'a',
            description: null,
            image_cid: null,
            tags: ['Race'],
            now: T0 - DAY,
          })
          await tx.feeds.insert({
            id: 'f-b',
            owner_id: 'w-b',
            category_id: null,
            name: 'b',
            description: null,
            image_cid: null,
            tags: ['Race'],
            now: T0 - DAY,
          })
          await addEntry(tx, 'current', { id: 'e-a', feed: 'f-a', price: 1000n, at: T0 - DAY })
          await addEntry(tx, 'current', { id: 'e-b', feed: 'f-b', price: 1000n, at: T0 - DAY })
        })
      }
      await setUp(sqlite)
      await setUp(pg.records)

      // Worker w: A pays B when w is even, B pays A when odd; purchases spread over four days (new days, pairs and buyers
      // are first seen by racing transactions). Amounts all differ, so a lost or doubled one shows in the sums.
      const saleOf = (w: number, k: number): Sale => {
        const [payer, payTo, entry] = w % 2 === 0 ? [A, B, 'e-b'] : [B, A, 'e-a']
        return {
          id: `r-${w}-${String(k).padStart(2, '0')}`,
          payer,
          payTo,
          entry,
          amount: 10n ** 15n + BigInt(w * 1000 + k),
          at: T0 + (k % 4) * DAY + w,
        }
      }
      const workers = Array.from({ length: 8 }, () => new SQL(url, { max: 1 }))
      closing.push(...workers)
      const errors: string[] = []
      // No retries here (the records adapter would hide a deadlock by running the transaction again).
      await Promise.all(
        workers.map(async (client, w) => {
          for (let k = 0; k < 50; k++) {
            await client
              .begin((tx) => sell(withSql(postgresStores)(postgresSql(tx)), saleOf(w, k)))
              .catch((error: { errno?: string; message: string }) => {
                errors.push(`${error.errno}: ${error.message}`)
              })
          }
        }),
      )
      expect(errors).toEqual([])

      for (let w = 0; w < 8; w++) for (let k = 0; k < 50; k++) await sqlite.transact((tx) => sell(tx, saleOf(w, k)))
      const rows = sqliteRows(path)
      const pgRows = await postgresRows(pg.sql, Object.keys(rows))
      // An entitlement records the purchase that granted it first: whichever won the race.
      expectSameRows(rows, pgRows, ['purchases'])
      expect(pgRows.purchases!.map((p) => `${p.wallet_id}:${p.entry_id}`).sort()).toEqual(['w-a:e-b', 'w-b:e-a'])
      const half = (parity: number) =>
        Array.from({ length: 8 }, (_, w) => w)
          .filter((w) => w % 2 === parity)
          .flatMap((w) => Array.from({ length: 50 }, (_, k) => saleOf(w, k).amount))
          .reduce((a, b) => a + b, 0n)
      const totals = Object.fromEntries(rows.address_totals!.map((r) => [r.address_lc, r]))
      expect(totals[A.toLowerCase()]).toMatchObject({
        sold: '200',
        revenue: String(half(1)),
        bought: '200',
        spent: String(half(0)),
        buyers: '1',
        sellers: '1',
        active_days: '5',
      })
      expect(rows.ledger_totals).toEqual([{ id: '1', transactions: '400', revenue: String(half(0) + half(1)) }])
    },
  )

  test('a transfer of 2^255 (and another) sums exactly', async () => {
    const url = await freshDatabase('large')
    const pg = postgresOn(url)
    await migratePostgres(pg.sql, 'large')
    const huge = 2n ** 255n
    await pg.records.transact(async (tx) => {
      for (const [id, who] of WALLETS) await tx.wallets.ensure(id, who, 'base-sepolia', T0)
      await tx.feeds.insert({
        id: 'f-1',
        owner_id: 'w-a',
        category_id: null,
        name: 'f',
        description: null,
        image_cid: null,
        tags: [],
        now: T0,
      })
      await addEntry(tx, 'current', { id: 'e-1', feed: 'f-1', price: huge, at: T0 })
    })
    for (const [id, payer] of [
      ['s-1', C],
      ['s-2', D],
    ] as const)
      await pg.records.transact((tx) => sell(tx, { id, payer, payTo: A, entry: 'e-1', amount: huge, at: T0 + 1 }))
    const sum = String(2n * huge)
    const read = async (query: string) => (await pg.sql.unsafe(query))[0]
    expect(await read('SELECT CAST(revenue AS TEXT) AS revenue, transactions FROM ledger_totals')).toEqual({
      revenue: sum,
      transactions: '2',
    })
    expect(await read(`SELECT CAST(revenue AS TEXT) AS v FROM address_totals WHERE address_lc = '${A.toLowerCase()}'`)).toEqual({ v: sum })
    expect(await read(`SELECT CAST(spent AS TEXT) AS v FROM address_totals WHERE address_lc = '${C.toLowerCase()}'`)).toEqual({
      v: String(huge),
    })
    expect(await read("SELECT CAST(revenue AS TEXT) AS v FROM feed_days WHERE feed_id = 'f-1'")).toEqual({ v: sum })
    expect(await read("SELECT CAST(total_revenue AS TEXT) AS v FROM feeds WHERE id = 'f-1'")).toEqual({ v: sum })
    expect((await pg.records.read.transactions.byId('s-1'))!.amount).toBe(huge)
    expect((await pg.records.read.entries.byId('e-1'))!.total_revenue).toBe(2n * huge)
  })
})
