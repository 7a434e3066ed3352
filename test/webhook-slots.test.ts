// The webhook sender against endpoints that never answer, more of them than Bun's fetch limit (256 requests in flight
// per process): its attempts leave room for the server's own requests, such as the chain's RPC, which would otherwise
// wait out a hanging attempt each (a settlement's receipt wait then runs out: 503 to a buyer who paid). The sender runs
// on real records, its deliveries made by the database's outbox trigger from one sale.
import { expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { MAX_IN_FLIGHT, webhookService } from '../src/domain/webhooks.ts'
import { openRecords } from '../src/store/open.ts'
import { tempDir } from '../dev/server.ts'
import { rmSync } from 'node:fs'
import { silentReceiver } from './helpers/webhook-receiver.ts'

const ENDPOINTS = 300

const title = `${ENDPOINTS} endpoints that never answer: at most ${MAX_IN_FLIGHT} attempts in flight; the server's own requests answered`
test(title, async () => {
  // Each attempt waits for its timeout (5 s).
  const silent = silentReceiver()
  const rpc = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ jsonrpc: '2.0', id: 1, result: '0x1' }) })
  // Real records (a migrated SQLite file): one seller with 300 endpoints (the API allows 5 a wallet; 60 free wallets
  // make as many), and one sale, which the database's trigger turns into a due delivery for each.
  const dataDir = tempDir('trellis-webhook-slots-')
  const records = await openRecords({ engine: 'sqlite', dataDir }, 'migrate')
  const now = Math.floor(Date.now() / 1000)
  await records.transact(async (tx) => {
    const wallet = await tx.wallets.ensure(crypto.randomUUID(), `0x${randomBytes(20).toString('hex')}`, 'base-sepolia', now)
    const feedId = crypto.randomUUID()
    await tx.feeds.insert({
      id: feedId,
      owner_id: wallet,
      category_id: null,
      name: 'sold',
      description: null,
      image_cid: null,
      tags: [],
      now,
    })
    const entry = {
      id: crypto.randomUUID(),
      feed_id: feedId,
      cid: 'bafkreislots',
      size: 1,
      mime_type: 'text/plain',
      title: null,
      description: null,
      metadata: null,
      tags: [],
      is_free: false,
      price: 1n,
      expires_at: null,
      now,
    }
    await tx.entries.add(entry, 1_000)
    for (let i = 0; i < ENDPOINTS; i++) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`
      const url = silent.url(`/hang/${i}`)
      await tx.webhooks.insert({
        id: crypto.randomUUID(),
        wallet_id: wallet,
        url,
        description: null,
        events: ['sale.recorded'],
        secret,
        created_at: now,
      })
    }
    const payer = `0x${randomBytes(20).toString('hex')}`
    await tx.transactions.insert({
      id: crypto.randomUUID(),
      piid: null,
      payer,
      pay_to: payer,
      amount: 1n,
      asset: payer,
      entry_id: entry.id,
      transaction_hash: `0x${randomBytes(32).toString('hex')}`,
      created_at: now,
      kind: 'entry',
      feed_id: feedId,
      network: 'base-sepolia',
    })
  })
  const sender = webhookService({ records, network: 'base-sepolia', allowPrivate: true, log: () => {} })
  try {
    const started = [await sender.deliverDue()]
    await Bun.sleep(2_200) // the first attempts are slow now: the sender starts others in their place
    started.push(await sender.deliverDue())
    await Bun.sleep(300)
    expect(silent.count.hanging).toBeGreaterThanOrEqual(Math.min(ENDPOINTS, MAX_IN_FLIGHT) - 8) // the attempts are under way
    const asked = performance.now()
    const answer = await fetch(`http://127.0.0.1:${rpc.port}/`, { method: 'POST', body: '{}' })
    expect(answer.status).toBe(200)
    expect(performance.now() - asked).toBeLessThan(1_000) // before the bound: until a hanging attempt's timeout
    expect(started[0]! + started[1]!).toBeLessThanOrEqual(MAX_IN_FLIGHT)
    expect(silent.count.most).toBeLessThanOrEqual(MAX_IN_FLIGHT)
    expect(MAX_IN_FLIGHT).toBeLessThanOrEqual((Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) || 256) - 64)
  } finally {
    await Bun.sleep(5_500) // the attempts end at their timeout
    silent.stop()
    rpc.stop(true)
    await records.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 30_000)
