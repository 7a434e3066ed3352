// One pending payment per purchase (payer, entry), migration 009: the pending row is the lock on any engine. A
// database written by an older Trellis, which could leave several payments of one purchase pending together, keeps
// every one of them pending (only the chain decides them) and is migrated without a hitch.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { openDb } from '../src/store/sqlite/database.ts'
import { embeddedRecords } from '../src/store/sqlite/records.ts'
import { entrySold, type NewPayment } from '../src/store/payments.ts'

let server: TestServer
let entryId: string
const PAYER = '0x00000000000000000000000000000000000000b1'

beforeAll(async () => {
  server = await startTestServer({}, { embedded: true }) // the legacy file below is SQLite's: its migration is this test's subject
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  entryId = (await createEntry(server.url, owner, feed.id, { content_base64: b64('paid'), is_free: false, price: { amount: '1000' } })).id
  await server.stop()
})
afterAll(() => server.dispose())

const payment = (n: number, at: number): NewPayment => ({
  id: `p${n}`,
  payer_lc: PAYER,
  nonce: `0x${String(n).padStart(64, '0')}`,
  sold: entrySold(entryId),
  pay_to: PAYER,
  amount: 1000n,
  x402_version: 1,
  payload: '{}',
  requirements: '{}',
  valid_before: at + 600,
  submitted_block: 1,
  settler: 'test',
  network: 'base-sepolia',
  now: at,
})

test('an older database with three payments of one purchase pending: all stay pending, then no fourth is taken', async () => {
  const path = join(server.dataDir, 'trellis.db')
  // What a Trellis before 009 leaves: no slot column, no index, three pending payments of one purchase and a failed one.
  const old = new Database(path)
  old.exec(
    `DROP INDEX payments_one_pending_purchase; ALTER TABLE payments DROP COLUMN pending_slot; ` +
      `DELETE FROM schema_migrations WHERE version = 9`,
  )
  const insert =
    old.query(`INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, requirements, valid_before,
    status, created_at, updated_at, network) VALUES (?, ?, ?, ?, ?, 1000, 1, '{}', '{}', ?, ?, ?, ?, 'base-sepolia')`)
  for (const [n, status, at] of [
    [3, 'pending', 30],
    [1, 'pending', 10],
    [2, 'pending', 20],
    [4, 'failed', 5],
  ] as const) {
    const p = payment(n, at)
    insert.run(p.id, p.payer_lc, p.nonce, p.sold.entry_id, p.pay_to, p.valid_before, status, at, at)
  }
  old.close()

  const records = embeddedRecords(openDb(path)) // migrates
  try {
    const db = new Database(path, { readonly: true })
    expect(db.query('SELECT id, status, pending_slot FROM payments ORDER BY id').all()).toEqual([
      { id: 'p1', status: 'pending', pending_slot: 0 },
      { id: 'p2', status: 'pending', pending_slot: 1 },
      { id: 'p3', status: 'pending', pending_slot: 2 },
      { id: 'p4', status: 'failed', pending_slot: 0 },
    ])
    db.close()
    // A new authorization, and the failed one tried again, lose to the pending ones: neither owns a settlement.
    expect(await records.transact((tx) => tx.payments.insertPending(payment(5, 50)))).toBe(false)
    expect(await records.transact((tx) => tx.payments.retryFailed('p4', entrySold(entryId), '{}', '{}', 2, 'test', 50))).toBe(false)
    expect(await records.read.payments.byKey('base-sepolia', PAYER, payment(5, 50).nonce)).toBeUndefined()
    expect((await records.read.payments.byKey('base-sepolia', PAYER, payment(4, 5).nonce))!.status).toBe('failed')

    // Once the chain has decided every one of them, the purchase may be tried again, exactly once at a time.
    for (const id of ['p1', 'p2', 'p3']) expect(await records.transact((tx) => tx.payments.markFailed(id, 'expired', 60))).toBe(true)
    const [a, b] = await Promise.all([
      records.transact((tx) => tx.payments.insertPending(payment(6, 70))),
      records.transact((tx) => tx.payments.retryFailed('p4', entrySold(entryId), '{}', '{}', 3, 'test', 70)),
    ])
    expect([a, b].filter(Boolean)).toHaveLength(1)
    expect((await records.read.payments.pending()).map((p) => p.id)).toEqual([a ? 'p6' : 'p4'])
    // The same authorization twice is one row, as before.
    expect(await records.transact((tx) => tx.payments.insertPending(payment(6, 80)))).toBe(false)
  } finally {
    await records.close()
  }
})
