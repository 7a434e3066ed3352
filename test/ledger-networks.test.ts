// Each payment and sale names the network it was made on (issue 40, migration 027): the ledger shows it and filters by
// it, the sales CSV carries it. Rows recorded before 027 take the network their records are bound to, on both engines
// (PostgreSQL without rewriting them); rows that name none at a start (never bound, or written by hand) are named then.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openRecords } from '../src/store/open.ts'
import { MIGRATIONS, POSTGRES_MIGRATIONS } from '../src/store/migrations/index.ts'
import { emptyDatabase, TEST_POSTGRES } from '../dev/test-database.ts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'

const BEFORE = 26 // the last step before networks were named
const ROWS = [
  "INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at) VALUES ('w', '0xA', '0xa', 'base', 1, 1)",
  "INSERT INTO feeds (id, owner_id, name, created_at, updated_at) VALUES ('f', 'w', 'feed', 1, 1)",
  'INSERT INTO entries (id, feed_id, cid, size, mime_type, is_free, price, created_at, updated_at) ' +
    "VALUES ('e', 'f', 'bafk', 1, 'text/plain', 0, 5, 1, 1)",
  'INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before, status, ' +
    "created_at, updated_at) VALUES ('p', '0xb', 'n', 'e', '0xA', 5, 2, '{}', '{}', 100, 'settled', 1, 1)",
  'INSERT INTO transactions (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id, transaction_hash, created_at, kind, ' +
    "feed_id) VALUES ('t', 'p', '0xB', '0xb', '0xA', '0xa', 5, 'USDC', 'e', '0x01', 1, 'entry', 'f')",
]
const bound = (network: string) =>
  `INSERT INTO meta (key, value) VALUES ('chain_binding', '{"network":"${network}","chain_id":8453,"token":"0x0"}')`
const NAMED = "SELECT (SELECT network FROM payments WHERE id = 'p') AS payment, (SELECT network FROM transactions WHERE id = 't') AS sale"

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A SQLite database at schema BEFORE, holding a sale; bound to `network` unless null. */
function sqliteBefore(network: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-027-'))
  dirs.push(dir)
  const db = new Database(join(dir, 'trellis.db'))
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  for (const m of MIGRATIONS.slice(0, BEFORE)) {
    db.exec(m.sql)
    db.query('INSERT INTO schema_migrations VALUES (?, ?, 1)').run(m.version, m.name)
  }
  for (const row of [...ROWS, ...(network ? [bound(network)] : [])]) db.exec(row)
  db.close()
  return dir
}

describe('027 on the embedded engine', () => {
  test('rows recorded before take the bound network; a directory never bound names them at its start', async () => {
    const named = (dir: string) => {
      const db = new Database(join(dir, 'trellis.db'), { readonly: true })
      const row = db.query(NAMED).get()
      db.close()
      return row
    }
    const dir = sqliteBefore('base')
    await (await openRecords({ engine: 'sqlite', dataDir: dir }, 'migrate')).close()
    expect(named(dir)).toEqual({ payment: 'base', sale: 'base' })

    const unbound = sqliteBefore(null)
    const records = await openRecords({ engine: 'sqlite', dataDir: unbound }, 'migrate')
    expect(named(unbound)).toEqual({ payment: null, sale: null })
    await records.transact((tx) => tx.transactions.nameNetwork('base-sepolia'))
    await records.close()
    expect(named(unbound)).toEqual({ payment: 'base-sepolia', sale: 'base-sepolia' })
  })
})

describe.skipIf(!TEST_POSTGRES)('027 on PostgreSQL', () => {
  test('rows recorded before take the bound network, later rows name their own (no default is left)', async () => {
    const url = await emptyDatabase(TEST_POSTGRES!)
    const sql = new SQL(url, { max: 1 })
    try {
      await sql.unsafe('CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)')
      for (const m of POSTGRES_MIGRATIONS.slice(0, BEFORE)) {
        await sql.unsafe(m.sql)
        await sql.unsafe('INSERT INTO schema_migrations VALUES ($1, $2, 1)', [m.version, m.name])
      }
      for (const row of [...ROWS, bound('base')]) await sql.unsafe(row)
      await (await openRecords({ engine: 'postgres', url, pool: 2 }, 'migrate')).close()
      expect((await sql.unsafe(NAMED))[0]).toEqual({ payment: 'base', sale: 'base' })
      const [column] = await sql.unsafe(
        "SELECT column_default FROM information_schema.columns WHERE table_name = 'transactions' AND column_name = 'network'",
      )
      expect(column.column_default).toBeNull()
    } finally {
      await sql.close()
    }
  })
})

describe('the ledger by network', () => {
  let chain: TestChain
  let server: TestServer
  let creator: Wallet
  let entry: { id: string }
  let feedId: string

  beforeAll(async () => {
    chain = await startChain()
    server = await startTestServer(chain.env)
    creator = newWallet()
    const feed = await createFeed(server.url, creator, { name: 'Networks' })
    feedId = feed.id
    entry = await createEntry(server.url, creator, feed.id, {
      content_base64: b64('paid words'),
      mime_type: 'text/plain',
      is_free: false,
      price: { amount: '10000', currency: 'USDC' },
    })
    const buyer = await chain.newFundedBuyer(100_000n)
    const payment = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: 10_000n }))
    const paid = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}`, { headers: { 'x-payment': payment } })
    expect(paid.status).toBe(200)
  }, 60_000)
  afterAll(async () => {
    await server?.dispose()
    await chain?.stop()
  })

  test('a sale names its network; the ledger filters by it; an unknown network is refused', async () => {
    const all = (await call(server.url, 'GET', `/v1/transactions?entry_id=${entry.id}`)).body
    expect(all.data).toHaveLength(1)
    expect(all.data[0].network).toBe('base-sepolia')
    const one = (await call(server.url, 'GET', `/v1/transactions/${all.data[0].id}`)).body
    expect(one.network).toBe('base-sepolia')
    const here = (await call(server.url, 'GET', '/v1/transactions?network=base-sepolia')).body
    expect(here.data.map((t: { id: string }) => t.id)).toContain(all.data[0].id)
    expect(here.pagination.total_count).toBe(here.data.length)
    const elsewhere = (await call(server.url, 'GET', '/v1/transactions?network=base')).body
    expect([elsewhere.data, elsewhere.pagination.total_count]).toEqual([[], 0])
    const refused = await call(server.url, 'GET', '/v1/transactions?network=mars')
    expect([refused.status, refused.body.code]).toEqual([400, 'INVALID_PARAMETER'])
  })

  test('the sales CSV carries the network of each sale', async () => {
    const wallet = (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body.owner_id
    const csv = await call(server.url, 'GET', `/v1/wallets/${wallet}/analytics?format=csv`, { wallet: creator })
    const [header, line] = String(csv.body).trim().split('\n')
    expect(line!.split(',')[header!.split(',').indexOf('network')]).toBe('base-sepolia')
  })
})
