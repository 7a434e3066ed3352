// Seeds a data directory with a market the size of a busy deployment, through the product's own store layer (so
// migrations, triggers and totals are exactly what the server would have written), and writes bench-manifest.json
// naming the rows the benchmark reads.
//
//   npx bun scripts/bench/seed.ts <dataDir> [--small]      (--small: 1/10 of every count)
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { getAddress } from 'viem'
import { openDb } from '../../src/store/sqlite/database.ts'
import { embeddedRecords } from '../../src/store/sqlite/records.ts'
import type { Stores } from '../../src/store/stores.ts'
import { entrySold } from '../../src/store/payments.ts'
import { SEED_CATEGORIES } from '../../src/domain/categories.ts'
import { openContent } from '../../src/content/open.ts'
import { rng, spread, zipf } from './prng.ts'

export const FULL_COUNTS = { wallets: 22_000, owners: 5_000, feeds: 10_000, entries: 100_000, transactions: 1_000_000 }
export const BIG_BLOB_BYTES = 37 * 1024 * 1024
export const COVER_IMAGE_BYTES = 8 * 1024
const BATCH = 10_000
const DAY = 86_400
const NETWORK = 'base-sepolia' // the server's default network
/** The seeded payments are not on any chain: a signature of the right shape, and one block number for all. */
const SEEDED_SIGNATURE = `0x${'5e'.repeat(65)}`
const SEEDED_BLOCK = 1
const TAGS = ['news', 'daily', 'analysis', 'alpha', 'video', 'podcast', 'data', 'signals', 'tutorial', 'charts', 'weekly', 'premium']

export interface Manifest {
  small: boolean
  created_at: number
  counts: typeof FULL_COUNTS & { purchases: number }
  hot_feed_id: string
  paid_entry: { feed_id: string; entry_id: string; size: number }
  free_entry: { feed_id: string; entry_id: string; size: number }
  big_entry: { feed_id: string; entry_id: string; size: number }
  /** The hot feed's cover image (an 8 KiB PNG). */
  cover_image: { feed_id: string; cid: string; size: number }
  heavy_buyer_address: string
  top_seller_wallet_id: string
  category_id: string
  tag: string
  seed_ms: number
  phases_ms: Record<string, number>
}

interface Entry {
  id: string
  feed: number
  created: number
  paid: boolean
  price: bigint
  cid: string
  size: number
  mime: string
  expires: number | null
}

export async function seed(dataDir: string, opts: { small?: boolean; log?: (line: string) => void } = {}): Promise<Manifest> {
  const log = opts.log ?? ((line: string) => console.log(line))
  const div = opts.small ? 10 : 1
  const n = Object.fromEntries(Object.entries(FULL_COUNTS).map(([k, v]) => [k, v / div])) as typeof FULL_COUNTS
  if (existsSync(join(dataDir, 'trellis.db'))) throw new Error(`${dataDir} already holds a database; seed an empty directory`)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const started = performance.now()
  const phases: Record<string, number> = {}
  let mark = performance.now()
  const phase = (name: string) => {
    phases[name] = Math.round(performance.now() - mark)
    log(`seed: ${name} ${phases[name]} ms`)
    mark = performance.now()
  }
  const r = rng(20240607)
  const now = Math.floor(Date.now() / 1000)
  const ms = (seconds: number) => seconds * 1000 + r.int(0, 999) // ids carry the row's own time
  const uuid = (seconds: number) => Bun.randomUUIDv7('hex', ms(seconds))

  // Content first: entries must name CIDs that exist. A 1 KiB text, a small JSON, one 37 MiB binary and a cover image.
  const content = await openContent(dataDir)
  const textBody = 'Trellis benchmark entry. '.repeat(41).slice(0, 1023) + '\n'
  const text = await content.put(new TextEncoder().encode(textBody))
  const json = await content.put(
    new TextEncoder().encode(JSON.stringify({ kind: 'bench', values: Array.from({ length: 20 }, (_, i) => i * i) })),
  )
  const bigBytes = new Uint8Array(BIG_BLOB_BYTES)
  const words = new Uint32Array(bigBytes.buffer)
  for (let i = 0; i < words.length; i++) words[i] = (r.next() * 4294967296) >>> 0 // incompressible
  const big = await content.put(bigBytes)
  // The hot feed's cover: PNG by its signature (all the server checks), incompressible after it.
  const coverBytes = new Uint8Array(COVER_IMAGE_BYTES)
  for (let i = 0; i < coverBytes.length; i++) coverBytes[i] = (r.next() * 256) >>> 0
  coverBytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const cover = await content.put(coverBytes)
  await content.close()
  phase('content')

  const db = openDb(join(dataDir, 'trellis.db')) // runs the product's migrations
  // Seed-only connection settings (a crash mid-seed throws the directory away anyway): no fsyncs and no WAL (pages
  // are written once, not to the WAL and again at checkpoints); a page cache big enough for the random-key indexes
  // (hashes, purchases, tallies) while they grow; statement journals (every INSERT that fires triggers opens one)
  // in memory instead of temp files. The database goes back to WAL mode at the end, as the server expects.
  db.exec('PRAGMA synchronous = OFF')
  db.exec('PRAGMA journal_mode = MEMORY')
  db.exec('PRAGMA cache_size = -2097152')
  db.exec('PRAGMA temp_store = MEMORY')
  const records = embeddedRecords(db)
  const batched = async <T>(rows: T[], insert: (tx: Stores, row: T, i: number) => Promise<unknown>) => {
    for (let start = 0; start < rows.length; start += BATCH) {
      await records.transact(async (tx) => {
        for (let i = start; i < Math.min(rows.length, start + BATCH); i++) await insert(tx, rows[i]!, i)
      })
    }
  }

  // Categories: the names the server would seed on its first start (it skips seeding when some exist).
  await batched(SEED_CATEGORIES, (tx, name) =>
    tx.categories.insert({ id: uuid(now - 500 * DAY), name, description: `${name} feeds`, icon_url: null, now: now - 500 * DAY }),
  )
  const categoryIds = await Promise.all(SEED_CATEGORIES.map(async (name) => (await records.read.categories.byName(name))!.id))

  // Wallets: fake addresses (EIP-55 form, as the product stores them), created 370..500 days ago.
  const walletCreated = Array.from({ length: n.wallets }, () => now - r.int(370 * DAY, 500 * DAY))
  const addresses = Array.from({ length: n.wallets }, () => getAddress(`0x${r.hex32()}${r.hex32()}${r.hex32()}${r.hex32()}${r.hex32()}`))
  const walletIds: string[] = new Array(n.wallets)
  await batched(addresses, async (tx, address, i) => {
    walletIds[i] = await tx.wallets.ensure(uuid(walletCreated[i]!), address, NETWORK, walletCreated[i]!)
  })
  phase('wallets')

  // Feeds: ~5k owners with 1..10 feeds each (skewed), created 30..395 days ago; most have a category and tags.
  const order = r.shuffle(Array.from({ length: n.wallets }, (_, i) => i))
  const owners = order.slice(0, n.owners)
  const feedsPerOwner = spread(n.feeds, n.owners, 10, 0.9, r)
  const feedOwner: number[] = []
  owners.forEach((w, k) => {
    for (let j = 0; j < feedsPerOwner[k]!; j++) feedOwner.push(w)
  })
  const feedCreated = feedOwner.map(() => now - r.int(30 * DAY, 395 * DAY))
  const feedCategory = feedOwner.map(() => (r.next() < 0.9 ? r.pick(categoryIds) : null))
  const feedTags = feedOwner.map(() => r.shuffle([...TAGS]).slice(0, r.int(1, 3)))
  const feedIds = feedCreated.map((t) => uuid(t))
  const feedRank = r.shuffle(feedIds.map((_, i) => i)) // rank 0 gets the most entries: the hot feed
  const hot = feedRank[0]!
  feedCategory[hot] ??= categoryIds[0]! // so the category+tag listing has a known match
  const feedOrder = feedIds.map((_, i) => i).sort((a, b) => (feedIds[a]! < feedIds[b]! ? -1 : 1)) // append to the id index
  await records.transact((tx) =>
    tx.images.record({ cid: cover.cid, mime_type: 'image/png', size: cover.size, created_at: now - 500 * DAY }),
  )
  await batched(feedOrder, (tx, f) =>
    tx.feeds.insert({
      id: feedIds[f]!,
      owner_id: walletIds[feedOwner[f]!]!,
      category_id: feedCategory[f]!,
      name: `Bench feed ${f}`,
      description: `Benchmark feed number ${f}`,
      image_cid: f === hot ? cover.cid : null,
      tags: feedTags[f]!,
      now: feedCreated[f]!,
    }),
  )
  phase('feeds')

  // Entries: ≤1000 per feed (skewed; the biggest feed is the "hot" one), 60 % paid at 0.01..5 USDC, 1 % of the
  // paid ones with a future expires_at. The hot feed's first entries are a paid and a free 1 KiB text; the second
  // biggest feed's first entry is the 37 MiB free binary.
  const perFeed = spread(n.entries, n.feeds, 1000, 1.0, r)
  const entries: Entry[] = []
  feedRank.forEach((f, rank) => {
    for (let j = 0; j < perFeed[rank]!; j++) {
      const created = feedCreated[f]! + Math.floor((now - 3600 - feedCreated[f]!) * r.next())
      const paid = rank === 0 && j < 2 ? j === 0 : r.next() < 0.6
      const isText = (rank === 0 && j < 2) || r.next() < 0.8
      const blob = rank === 1 && j === 0 ? big : isText ? text : json
      entries.push({
        id: uuid(created),
        feed: f,
        created,
        paid: paid && blob !== big,
        cid: blob.cid,
        size: blob.size,
        mime: blob === big ? 'video/mp4' : isText ? 'text/plain' : 'application/json',
        price: paid ? BigInt(Math.round(10 * Math.exp(Math.log(500) * r.next()))) * 1000n : 0n,
        expires: paid && r.next() < 0.01 ? now + r.int(DAY, 90 * DAY) : null,
      })
    }
  })
  const [paidEntry, freeEntry] = [entries[0]!, entries[1]!]
  const bigEntry = entries[perFeed[0]!]!
  await batched(
    [...entries].sort((a, b) => (a.id < b.id ? -1 : 1)),
    async (tx, e) => {
      const added = await tx.entries.add(
        {
          id: e.id,
          feed_id: feedIds[e.feed]!,
          cid: e.cid,
          size: e.size,
          mime_type: e.mime,
          title: `Entry ${e.id.slice(-6)}`,
          description: null,
          metadata: null,
          tags: [r.pick(TAGS)],
          is_free: !e.paid,
          price: e.paid ? e.price : 0n,
          expires_at: e.expires,
          body_text: e.mime === 'text/plain' ? textBody : null, // indexed for search when free, as the server does
          now: e.created,
        },
        1000,
      )
      if (typeof added === 'string') throw new Error(`seed: no room in feed ${e.feed} (${added})`)
    },
  )
  phase('entries')

  // Ledger: payers Zipf-skewed over all wallets, entries Zipf-popular among paid ones (the hot paid entry first),
  // times over the last 365 days with recent days denser, inserted in time order so ids append.
  const paid = r.shuffle(entries.filter((e) => e.paid && e !== paidEntry))
  paid.unshift(paidEntry)
  const payerRank = r.shuffle(Array.from({ length: n.wallets }, (_, i) => i))
  const drawPayer = zipf(n.wallets, 1.0, r)
  const drawEntry = zipf(paid.length, 0.9, r)
  const txEntry = new Int32Array(n.transactions)
  const txPayer = new Int32Array(n.transactions)
  const keys = new Float64Array(n.transactions) // time * 2^20 + index: a native numeric sort orders by time
  const sales = new Map<number, number>()
  for (let i = 0; i < n.transactions; i++) {
    const e = drawEntry()
    const owner = feedOwner[paid[e]!.feed]!
    let payer = payerRank[drawPayer()]!
    while (payer === owner) payer = payerRank[drawPayer()]! // owners read their own entries for free
    const lo = Math.max(paid[e]!.created, now - 365 * DAY)
    const u = r.next()
    keys[i] = Math.floor(now - (now - lo) * u * u) * 1048576 + i
    txEntry[i] = e
    txPayer[i] = payer
    sales.set(owner, (sales.get(owner) ?? 0) + 1)
  }
  keys.sort()
  for (let start = 0; start < n.transactions; start += BATCH) {
    await records.transact(async (tx) => {
      for (let k = start; k < Math.min(n.transactions, start + BATCH); k++) {
        const i = keys[k]! % 1048576
        const created = Math.floor(keys[k]! / 1048576)
        const entry = paid[txEntry[i]!]!
        const payer = txPayer[i]!
        const id = uuid(created)
        const hash =
          `0x${r.hex32()}${r.hex32()}${r.hex32()}${r.hex32()}` + `${r.hex32()}${r.hex32()}${r.hex32()}${i.toString(16).padStart(8, '0')}`
        // Its payment, as the x402 flow leaves it: written pending, then settled with the transfer's hash. The ledger
        // row names it (piid), so `trellis verify` finds every ledger row backed by a settled payment.
        const piid = uuid(created)
        const payTo = addresses[feedOwner[entry.feed]!]!
        const payerLc = addresses[payer]!.toLowerCase()
        const nonce = `0x${createHash('sha256').update(hash).digest('hex')}`
        const authorization = {
          from: addresses[payer]!,
          to: payTo,
          value: entry.price.toString(),
          validAfter: '0',
          validBefore: String(created + 300),
          nonce,
        }
        if (
          !(await tx.payments.insertPending({
            id: piid,
            payer_lc: payerLc,
            nonce,
            sold: entrySold(entry.id),
            pay_to: payTo,
            amount: entry.price,
            x402_version: 2,
            payload: JSON.stringify({ x402Version: 2, payload: { authorization, signature: SEEDED_SIGNATURE } }),
            requirements: JSON.stringify({ scheme: 'exact', network: NETWORK, amount: entry.price.toString(), payTo, asset: 'USDC' }),
            valid_before: created + 300,
            submitted_block: null,
            settler: 'seed',
            network: NETWORK,
            now: created,
          }))
        )
          throw new Error(`seed: payment ${piid} was not written`)
        if (!(await tx.payments.markSettled(piid, hash, SEEDED_BLOCK, created))) throw new Error(`seed: payment ${piid} was not settled`)
        await tx.transactions.insert({
          id,
          piid,
          payer: addresses[payer]!,
          pay_to: payTo,
          amount: entry.price,
          asset: 'USDC',
          entry_id: entry.id,
          transaction_hash: hash,
          created_at: created,
          kind: 'entry',
          feed_id: feedIds[entry.feed]!,
          network: NETWORK,
        })
        await tx.purchases.addToTotals(entry.id, entry.price)
        await tx.purchases.grant(walletIds[payer]!, entry.id, id, created)
      }
    })
    if ((start / BATCH) % 20 === 19) log(`seed: transactions ${start + BATCH}/${n.transactions} ${Math.round(performance.now() - mark)} ms`)
  }
  phase('transactions')

  const purchaseCount = db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM purchases').get()!.n
  db.exec('PRAGMA journal_mode = WAL') // one file, in the mode the server uses: copies are consistent and quick
  await records.close()
  phase('checkpoint')

  const topSeller = [...sales.entries()].sort((a, b) => b[1] - a[1])[0]![0]
  const manifest: Manifest = {
    small: Boolean(opts.small),
    created_at: now,
    counts: { ...n, purchases: purchaseCount },
    hot_feed_id: feedIds[hot]!,
    paid_entry: { feed_id: feedIds[paidEntry.feed]!, entry_id: paidEntry.id, size: paidEntry.size },
    free_entry: { feed_id: feedIds[freeEntry.feed]!, entry_id: freeEntry.id, size: freeEntry.size },
    big_entry: { feed_id: feedIds[bigEntry.feed]!, entry_id: bigEntry.id, size: bigEntry.size },
    cover_image: { feed_id: feedIds[hot]!, cid: cover.cid, size: cover.size },
    heavy_buyer_address: addresses[payerRank[0]!]!,
    top_seller_wallet_id: walletIds[topSeller]!,
    category_id: feedCategory[hot]!,
    tag: feedTags[hot]![0]!,
    seed_ms: Math.round(performance.now() - started),
    phases_ms: phases,
  }
  writeFileSync(join(dataDir, 'bench-manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
  log(
    `seed: done in ${(manifest.seed_ms / 1000).toFixed(1)} s (${n.wallets} wallets, ${n.feeds} ` +
      `feeds, ${n.entries} entries, ${n.transactions} transactions, ${purchaseCount} purchases)`,
  )
  return manifest
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const dir = args.find((a) => !a.startsWith('--'))
  if (!dir || args.some((a) => a.startsWith('--') && a !== '--small')) {
    console.error('Usage: npx bun scripts/bench/seed.ts <dataDir> [--small]')
    process.exit(2)
  }
  await seed(dir, { small: args.includes('--small') })
}
