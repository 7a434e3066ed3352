// The tallies kept by triggers (migration 005) against a recomputation from the raw rows, on a random market of a
// few thousand sales written through the store layer: the SQL audit finds nothing, every leaderboard and every
// wallet's statistics equal what a brute-force pass over the ledger gives, and upgrading a database that already
// holds the market (the migration's backfill) gives the very same tables.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDb, type Db } from '../src/store/sqlite/database.ts'
import { MIGRATIONS } from '../src/store/migrations/index.ts'
import { embeddedRecords } from '../src/store/sqlite/records.ts'
import type { Records } from '../src/store/stores.ts'
import { buildLeaderboards } from '../src/domain/leaderboards.ts'
import { ranksFrom, walletStats } from '../src/domain/wallet-stats.ts'
import { tempDir } from '../dev/server.ts'

const DAY = 86_400
const NOW = 1_790_000_000 + 12_345 // not on a day boundary: every period has a partial first day
const TABLES = [
  'feed_days',
  'buyer_days',
  'feed_buyers',
  'entry_buyers',
  'address_pairs',
  'address_days',
  'address_totals',
  'ledger_totals',
]

let dir: string
let db: Db
let records: Records
interface Sale {
  payer: string
  payTo: string
  amount: bigint
  entry: string
  feed: string
  at: number
}
const sales: Sale[] = []
const feedsById = new Map<string, { id: string; owner: string; active: boolean; created_at: number; category: string | null }>()
const wallets: { id: string; address: string; created_at: number }[] = []

/** A deterministic PRNG, so a failure can be replayed. */
function prng(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
}

async function seed(target: Db, on: Records) {
  const random = prng(7)
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
  const categories = target
    .query<{ id: string }, []>('SELECT id FROM categories')
    .all()
    .map((c) => c.id)
  const hex = (n: number) => `0x${n.toString(16).padStart(40, '0')}`
  await on.transact(async (tx) => {
    for (let i = 0; i < 60; i++) {
      const address = hex(0xabc000 + i).replace('0xa', '0xA') // mixed case, as EIP-55 addresses are
      const at = NOW - 90 * DAY + i * 3_600
      const id = Bun.randomUUIDv7('hex', at * 1000)
      await tx.wallets.ensure(id, address, 'base-sepolia', at)
      if (target === db) wallets.push({ id, address, created_at: at })
    }
  })
  const all = target.query<{ id: string; address: string }, []>('SELECT id, address FROM wallets ORDER BY created_at').all()
  const owners = all.slice(0, 15)
  const entries: { id: string; feed: string; owner: string; price: bigint }[] = []
  await on.transact(async (tx) => {
    for (let i = 0; i < 40; i++) {
      const owner = owners[i % owners.length]
      const at = NOW - 80 * DAY + i * 7_200
      const id = Bun.randomUUIDv7('hex', at * 1000)
      const category = i % 5 === 0 ? null : pick(categories)
      await tx.feeds.insert({
        id,
        owner_id: owner.id,
        category_id: category,
        name: `feed ${i}`,
        description: null,
        image_cid: null,
        tags: [`t${i % 4}`],
        now: at,
      })
      if (target === db) feedsById.set(id, { id, owner: owner.address, active: true, created_at: at, category })
      for (let k = 0; k < 5; k++) {
        const entryAt = at + k * 60
        const entryId = Bun.randomUUIDv7('hex', entryAt * 1000)
        const price = BigInt(1 + Math.floor(random() * 5)) * 250_000n
        const added = await tx.entries.add(
          {
            id: entryId,
            feed_id: id,
            cid: 'bafkqaaa',
            size: 10 + k,
            mime_type: 'text/plain',
            title: null,
            description: null,
            metadata: null,
            tags: [],
            is_free: k === 0,
            price: k === 0 ? 0n : price,
            expires_at: null,
            now: entryAt,
          },
          1000,
        )
        if (typeof added === 'string') throw new Error(`no slot (${added})`)
        if (k > 0) entries.push({ id: entryId, feed: id, owner: owner.address, price })
      }
    }
  })
  await on.transact(async (tx) => {
    for (let i = 0; i < 3_000; i++) {
      // Denser towards now; some exactly on day and period edges.
      const age = i % 97 === 0 ? DAY : i % 89 === 0 ? 7 * DAY : Math.floor(random() ** 2 * 60 * DAY)
      const at = NOW - age
      const entry = entries[Math.floor(random() ** 1.5 * entries.length)]
      const payer = pick(all)
      const id = Bun.randomUUIDv7('hex', at * 1000)
      await tx.transactions.insert({
        id,
        piid: null,
        payer: payer.address,
        pay_to: entry.owner,
        amount: entry.price,
        asset: 'USDC',
        entry_id: entry.id,
        transaction_hash: `0x${i.toString(16).padStart(64, '0')}`,
        created_at: at,
        kind: 'entry',
        feed_id: entry.feed,
        network: 'base-sepolia',
      })
      await tx.purchases.addToTotals(entry.id, entry.price)
      await tx.purchases.grant(payer.id, entry.id, id, at)
      if (target === db)
        sales.push({
          payer: payer.address.toLowerCase(),
          payTo: entry.owner.toLowerCase(),
          amount: entry.price,
          entry: entry.id,
          feed: entry.feed,
          at,
        })
    }
  })
  // Deactivated feeds leave the feed boards and providers' figures, not the buyers'.
  for (const id of [
    ...(target === db
      ? feedsById.keys()
      : target
          .query<{ id: string }, []>('SELECT id FROM feeds ORDER BY created_at')
          .all()
          .map((r) => r.id)),
  ].filter((_, i) => i % 7 === 3)) {
    await on.transact(async (tx) => {
      await tx.entries.deactivateAllIn(id, NOW)
      await tx.feeds.update(id, { is_active: false }, NOW)
    })
    if (target === db) feedsById.get(id)!.active = false
  }
}

beforeAll(async () => {
  dir = tempDir('trellis-tallies-')
  db = openDb(join(dir, 'trellis.db'))
  records = embeddedRecords(db, { assertNoIo: true })
  await seed(db, records)
})

afterAll(async () => {
  await records?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------------------------
// The brute-force reference: one loop over every sale.

const PERIOD_S = { '1d': DAY, '7d': 7 * DAY, '30d': 30 * DAY, all: Infinity } as const
type Period = keyof typeof PERIOD_S
const inPeriod = (p: Period) => sales.filter((s) => NOW - s.at <= PERIOD_S[p])
const sum = (xs: Sale[]) => xs.reduce((n, s) => n + s.amount, 0n)
const distinct = <T>(xs: T[]) => new Set(xs).size
const walletOf = (address: string) => wallets.find((w) => w.address.toLowerCase() === address)!
const older = (a: { created_at: number; id: string }, b: { created_at: number; id: string }) =>
  a.created_at - b.created_at || (a.id < b.id ? -1 : 1)
const desc = (a: bigint, b: bigint) => (a > b ? -1 : a < b ? 1 : 0)

function feedFigures(p: Period) {
  return [...feedsById.values()]
    .filter((f) => f.active)
    .map((f) => {
      const s = inPeriod(p).filter((x) => x.feed === f.id)
      return { f, purchases: s.length, revenue: sum(s), buyers: distinct(s.map((x) => x.payer)) }
    })
    .filter((x) => x.purchases > 0)
}

describe('tallies kept by triggers', () => {
  const inconsistencies = () => records.snapshot((view) => view.audit.inconsistencies())

  test('the SQL audit recomputes every tally from the ledger and finds no difference', async () => {
    expect(sales.length).toBe(3_000)
    // The rows were written without x402 payments behind them: that rule is the only one they break.
    const problems = await inconsistencies()
    expect(problems.map((p) => p.problem)).toEqual(['ledger row without a settled payment'])
    // A broken tally is found.
    const one = db.query<{ feed_id: string; day: number }, []>('SELECT feed_id, day FROM feed_days LIMIT 1').get()!
    const nudge = (by: number) =>
      db.query('UPDATE feed_days SET revenue = revenue + ? WHERE feed_id = ? AND day = ?').run(by, one.feed_id, one.day)
    nudge(1)
    try {
      expect((await inconsistencies()).find((p) => p.problem === 'daily feed tallies differ from the ledger')?.subjects).toEqual([
        `${one.feed_id}@${one.day}`,
      ])
    } finally {
      nudge(-1)
    }
    // A ledger row that names another feed than its entry's is named (and the feed tallies it moved).
    const sold = db.query<{ id: string; feed_id: string }, []>("SELECT id, feed_id FROM transactions WHERE kind = 'entry' LIMIT 1").get()!
    const other = db.query<{ id: string }, [string]>('SELECT id FROM feeds WHERE id != ? LIMIT 1').get(sold.feed_id)!
    db.query('UPDATE transactions SET feed_id = ? WHERE id = ?').run(other.id, sold.id)
    try {
      const found = await inconsistencies()
      expect(found.find((p) => p.problem === 'ledger row whose feed or kind disagrees with what it sold')?.subjects).toEqual([sold.id])
      expect(found.map((p) => p.problem)).toContain('feed totals differ from the ledger')
    } finally {
      db.query('UPDATE transactions SET feed_id = ? WHERE id = ?').run(sold.feed_id, sold.id)
    }
    // A ledger row whose buyer lost the entitlement is named.
    const bought = db
      .query<{ wallet_id: string; entry_id: string; transaction_id: string; created_at: number }, []>('SELECT * FROM purchases LIMIT 1')
      .get()!
    db.query('DELETE FROM purchases WHERE wallet_id = ? AND entry_id = ?').run(bought.wallet_id, bought.entry_id)
    try {
      const entitled = (await inconsistencies()).find((p) => p.problem === "ledger row without the buyer's entitlement")?.subjects ?? []
      expect(entitled.length).toBeGreaterThan(0)
      expect(entitled).toContain(bought.transaction_id)
    } finally {
      db.query('INSERT INTO purchases (wallet_id, entry_id, transaction_id, created_at) VALUES (?, ?, ?, ?)').run(
        bought.wallet_id,
        bought.entry_id,
        bought.transaction_id,
        bought.created_at,
      )
    }
    expect((await inconsistencies()).map((p) => p.problem)).toEqual(['ledger row without a settled payment'])
  })

  test('an upgrade (the migration backfill over existing rows) gives the same tables as the triggers', () => {
    const upgraded = new Database(':memory:', { strict: true })
    upgraded.exec('PRAGMA foreign_keys = ON')
    for (const m of MIGRATIONS.filter((m) => m.version < 5)) upgraded.exec(m.sql)
    // The same rows, copied as they are (triggers do not exist yet in this database), in the columns of that time.
    upgraded.exec(`ATTACH '${join(dir, 'trellis.db')}' AS source`)
    for (const table of ['wallets', 'categories', 'feeds', 'entries', 'transactions', 'purchases']) {
      const columns = upgraded
        .query<{ name: string }, []>(`PRAGMA main.table_info(${table})`)
        .all()
        .map((c) => c.name)
        .join(', ')
      upgraded.exec(`DELETE FROM main.${table}`)
      upgraded.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM source.${table}`)
    }
    upgraded.exec(MIGRATIONS.find((m) => m.version === 5)!.sql)
    for (const table of TABLES) {
      const rows = (d: string) => upgraded.query(`SELECT * FROM ${d}.${table} ORDER BY 1, 2`).all()
      expect(rows('main'), table).toEqual(rows('source'))
    }
    upgraded.close()
  })

  for (const period of Object.keys(PERIOD_S) as Period[]) {
    test(`leaderboards for ${period} equal a brute-force pass over the ledger`, async () => {
      const boards = await records.snapshot((view) => buildLeaderboards(view.stats, NOW))
      const byPurchases = feedFigures(period).sort((a, b) => b.purchases - a.purchases || older(a.f, b.f))
      expect(
        (boards[`most-popular:${period}`] as any[]).map((i) => [i.feed_id, i.total_purchases, i.total_revenue, i.unique_buyers]),
      ).toEqual(byPurchases.map((x) => [x.f.id, String(x.purchases), x.revenue.toString(), String(x.buyers)]))
      const byRevenue = feedFigures(period).sort((a, b) => desc(a.revenue, b.revenue) || b.purchases - a.purchases || older(a.f, b.f))
      expect(
        (boards[`top-revenue:${period}`] as any[]).map((i) => [i.feed_id, i.total_purchases, i.total_revenue, i.unique_buyers]),
      ).toEqual(byRevenue.map((x) => [x.f.id, String(x.purchases), x.revenue.toString(), String(x.buyers)]))

      const owners = [...new Set(feedFigures(period).map((x) => x.f.owner))]
        .map((owner) => {
          const s = inPeriod(period).filter((x) => feedsById.get(x.feed)!.active && feedsById.get(x.feed)!.owner === owner)
          return { w: walletOf(owner.toLowerCase()), purchases: s.length, revenue: sum(s), buyers: distinct(s.map((x) => x.payer)) }
        })
        .sort((a, b) => desc(a.revenue, b.revenue) || b.purchases - a.purchases || older(a.w, b.w))
      expect(
        (boards[`top-providers:${period}`] as any[]).map((i) => [i.user_id, i.total_purchases, i.total_revenue, i.unique_buyers]),
      ).toEqual(owners.map((x) => [x.w.id, String(x.purchases), x.revenue.toString(), String(x.buyers)]))

      const buyers = [...new Set(inPeriod(period).map((s) => s.payer))]
        .map((payer) => {
          const s = inPeriod(period).filter((x) => x.payer === payer)
          return {
            w: walletOf(payer),
            purchases: s.length,
            spent: sum(s),
            entries: distinct(s.map((x) => x.entry)),
            feeds: distinct(s.map((x) => x.feed)),
          }
        })
        .sort((a, b) => desc(a.spent, b.spent) || b.purchases - a.purchases || older(a.w, b.w))
      expect(
        (boards[`top-buyers:${period}`] as any[]).map((i) => [
          i.user_id,
          i.total_purchases,
          i.total_spent,
          i.unique_entries_purchased,
          i.unique_feeds_purchased_from,
        ]),
      ).toEqual(buyers.map((x) => [x.w.id, String(x.purchases), x.spent.toString(), String(x.entries), String(x.feeds)]))
    })
  }

  test('category-stats and wallet statistics equal a brute-force pass', async () => {
    const boards = await records.snapshot((view) => buildLeaderboards(view.stats, NOW))
    for (const item of boards['category-stats'] as any[]) {
      const feeds = [...feedsById.values()].filter((f) => f.active && f.category === item.category_id)
      const s = sales.filter((x) => feeds.some((f) => f.id === x.feed))
      expect([item.total_feeds, item.total_purchases, item.total_revenue, item.unique_buyers], item.category_name).toEqual([
        String(feeds.length),
        String(s.length),
        sum(s).toString(),
        String(distinct(s.map((x) => x.payer))),
      ])
    }
    const ranks = ranksFrom(await records.read.stats.ranks())
    for (const w of wallets) {
      const stats = await walletStats(
        records,
        ranks,
        {
          ...w,
          network: 'base-sepolia',
          username: null,
          picture_url: null,
          updated_at: w.created_at,
          total_feeds: 0,
          total_entries: 0,
          total_revenue: 0n,
        },
        NOW,
      )
      const address = w.address.toLowerCase()
      const sold = sales.filter((s) => s.payTo === address)
      const bought = sales.filter((s) => s.payer === address)
      expect([stats.revenue_stats.total_revenue, stats.total_items_sold, stats.unique_buyers_count], w.address).toEqual([
        sum(sold).toString(),
        sold.length,
        distinct(sold.map((s) => s.payer)),
      ])
      expect(
        [
          stats.purchase_stats.total_spent,
          stats.total_purchases_made,
          stats.purchase_stats.unique_sellers,
          stats.unique_feeds_purchased_from,
        ],
        w.address,
      ).toEqual([sum(bought).toString(), bought.length, distinct(bought.map((s) => s.payTo)), distinct(bought.map((s) => s.feed))])
      const revenueRank = 1 + wallets.filter((o) => sum(sales.filter((s) => s.payTo === o.address.toLowerCase())) > sum(sold)).length
      expect(stats.rankings.revenue_rank, w.address).toBe(revenueRank)
    }
  })
})
