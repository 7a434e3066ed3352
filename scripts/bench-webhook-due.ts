// `bun scripts/bench-webhook-due.ts [endpoints] [backlogged] [backlog]`: the webhook sender's one query a pass (the
// due deliveries, one per endpoint), timed on a migrated embedded database holding `endpoints` endpoints, each with
// one due delivery every tenth, and `backlogged` of them with `backlog` due deliveries each (a wallet whose endpoint
// answers slowly while its sales pile up). The figure must not grow with the backlog (docs/performance.md).
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { databaseFile, openRecords, recordsPlace } from '../src/store/open.ts'

const [endpoints = 1000, backlogged = 10, backlog = 20_000] = process.argv.slice(2).map(Number)
const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bench-due-'))
const place = recordsPlace({ dataDir, databaseUrl: null, dbPool: 1 })
try {
  await (await openRecords(place, 'migrate')).close()
  const db = new Database(databaseFile(dataDir))
  const id = (i: number) => `e${String(i).padStart(6, '0')}`
  db.transaction(() => {
    db.run(
      `INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at) VALUES ('w', '0x0', '0x0', 'base-sepolia', 0, 0)`,
    )
    const endpoint = db.prepare(
      `INSERT INTO webhook_endpoints (id, wallet_id, url, events, secret, created_at, updated_at) ` +
        `VALUES (?, 'w', 'https://x.example', '[]', 's', 0, 0)`,
    )
    const delivery = db.prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, status, next_attempt_at, ` +
        `created_at) VALUES (?, ?, 'sale.recorded', 's', 'pending', ?, 0)`,
    )
    let n = 0
    for (let i = 0; i < endpoints; i++) endpoint.run(id(i))
    for (let i = 0; i < backlogged; i++) for (let j = 0; j < backlog; j++) delivery.run(`d${n++}`, id(i), j)
    for (let i = 0; i < endpoints; i += 10) delivery.run(`d${n++}`, id(i), 5)
  })()
  db.close()
  const records = await openRecords(place, 'current')
  const pass = () => records.read.webhooks.due(1e9, 256, [], false)
  await pass()
  const rounds = 20
  const started = performance.now()
  for (let i = 0; i < rounds; i++) await pass()
  const ms = (performance.now() - started) / rounds
  console.log(`${endpoints} endpoints, ${backlogged} × ${backlog} backlogged: ${ms.toFixed(2)} ms a pass, ${(await pass()).length} due`)
  await records.close()
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
