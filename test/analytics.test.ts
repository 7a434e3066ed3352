// A creator's analytics (issue 39), on the engine the suite runs on. A random market (two creators, buyers who come
// back, entry and pass sales over 80 days, some on day edges) is written through the stores, and every field of
// GET /v1/wallets/{id}/analytics, for several ranges and intervals, equals a brute-force pass over the public ledger
// (GET /v1/transactions?pay_to=) and the 402s the test itself was answered; so does the CSV export, row for row. Only
// the wallet itself may read them (401 unsigned, 403 for another). On a spawned server, the 402s of the hot routes
// (an entry's, a pass's) are counted too, and `trellis mcp` tells the operator's wallet the same through get_analytics.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, expectError, newWallet, type Target, type Wallet } from '../dev/api.ts'
import { openRecords } from '../src/store/open.ts'
import { usdcDecimal } from '../src/lib/money.ts'
import { closeClients, data, stdioClient } from './helpers/mcp-client.ts'

const DAY = 86_400
const NOW = Math.floor(Date.now() / 1000)
const TODAY = Math.floor(NOW / DAY) * DAY
const NETWORK = 'base-sepolia'

/** A deterministic PRNG, so a failure can be replayed. */
function prng(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
}

interface Sale {
  id: string
  payer: string
  pay_to: string
  amount: bigint
  entry_id: string | null
  feed_id: string
  kind: 'entry' | 'pass'
  transaction_hash: string
  created_at: number
}
type Challenges = Map<string, number> // by "feed entry" ('' for a feed's pass)
/** A creator's feeds (id → name) and entries (id → title, and its feed). */
interface Names {
  feeds: Map<string, string>
  titles: Map<string, string>
  feedOf: Map<string, string>
}

/** Every row of the public ledger paid to `address`, page by page. */
async function ledgerOf(target: Target, address: string): Promise<Sale[]> {
  const rows: Sale[] = []
  for (let token = ''; ; ) {
    const reply = await call(target, 'GET', `/v1/transactions?pay_to=${address}&page_size=100${token && `&page_token=${token}`}`)
    expect(reply.status).toBe(200)
    for (const t of reply.body.transactions) rows.push({ ...t, id: t.id.slice(3), amount: BigInt(t.amount), payer: t.payer.toLowerCase() })
    if (!reply.body.pagination.has_more) return rows
    token = reply.body.pagination.next_page_token
  }
}

/** The buckets' starts, made with Date's calendar (not the server's arithmetic): weeks from Monday, months from the 1st. */
function startsOf(interval: string, from: number, to: number): number[] {
  const first = new Date(from * 1000)
  let start = from
  if (interval === 'week') start = from - ((first.getUTCDay() + 6) % 7) * DAY
  if (interval === 'month') start = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1) / 1000
  const starts: number[] = []
  while (start < to) {
    starts.push(start)
    const d = new Date(start * 1000)
    start = interval === 'month' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000 : start + (interval === 'week' ? 7 : 1) * DAY
  }
  return starts
}

const byRank = (a: { revenue: string; sales: number; challenges: number; id: string }, b: typeof a) =>
  BigInt(b.revenue) > BigInt(a.revenue)
    ? 1
    : BigInt(b.revenue) < BigInt(a.revenue)
      ? -1
      : b.sales - a.sales || b.challenges - a.challenges || (a.id < b.id ? -1 : 1)

/** The whole answer, recomputed from the ledger rows and the 402s counted by the test. */
function expected(walletId: string, ledger: Sale[], challenges: Challenges, names: Names, interval: string, from: number, to: number) {
  const rows = ledger.filter((s) => s.created_at >= from && s.created_at < to)
  const sum = (xs: Sale[]) => xs.reduce((n, s) => n + s.amount, 0n)
  const buyers = (xs: Sale[]) => new Set(xs.map((s) => s.payer))
  const counts = new Map<string, number>()
  for (const s of rows) counts.set(s.payer, (counts.get(s.payer) ?? 0) + 1)
  // Challenges were all served today: in the range when today is.
  const today = TODAY >= from && TODAY < to
  const challenged = (feed: string, entry?: string) =>
    today
      ? [...challenges]
          .filter(([key]) => key.startsWith(`${feed} `) && (entry === undefined || key === `${feed} ${entry}`))
          .reduce((n, [, c]) => n + c, 0)
      : 0
  const allChallenges = today ? [...challenges.values()].reduce((n, c) => n + c, 0) : 0
  const starts = startsOf(interval, from, to)
  const ranked = (ids: string[], of: (s: Sale) => string | null, challengesOf: (id: string) => number) =>
    ids
      .map((id) => {
        const own = rows.filter((s) => of(s) === id)
        return { id, sales: own.length, revenue: sum(own).toString(), challenges: challengesOf(id) }
      })
      .filter((x) => x.sales > 0 || x.challenges > 0)
      .sort(byRank)
      .slice(0, 10)
  return {
    wallet_id: walletId,
    from,
    to,
    interval,
    totals: {
      sales: rows.length,
      revenue: sum(rows).toString(),
      revenue_usdc: usdcDecimal(sum(rows)),
      entry_sales: rows.filter((s) => s.kind === 'entry').length,
      pass_sales: rows.filter((s) => s.kind === 'pass').length,
      unique_buyers: buyers(rows).size,
      repeat_buyers: [...counts.values()].filter((n) => n > 1).length,
      challenges: allChallenges,
    },
    series: starts.map((start, i) => {
      const end = starts[i + 1] ?? to
      const inside = rows.filter((s) => s.created_at >= start && s.created_at < end)
      const feedsChallenged = [...names.feeds.keys()].reduce((n, feed) => n + challenged(feed), 0)
      return {
        start,
        sales: inside.length,
        revenue: sum(inside).toString(),
        unique_buyers: buyers(inside).size,
        challenges: TODAY >= start && TODAY < end ? feedsChallenged : 0,
      }
    }),
    top_entries: ranked(
      [...names.titles.keys()],
      (s) => s.entry_id,
      (id) => challenged(names.feedOf.get(id)!, id),
    ).map((x) => ({ entry_id: x.id, title: names.titles.get(x.id)!, sales: x.sales, revenue: x.revenue, challenges: x.challenges })),
    top_feeds: ranked(
      [...names.feeds.keys()],
      (s) => s.feed_id,
      (id) => challenged(id),
    ).map((x) => ({
      feed_id: x.id,
      name: names.feeds.get(x.id)!,
      sales: x.sales,
      revenue: x.revenue,
      challenges: x.challenges,
    })),
  }
}

interface Creator {
  wallet: Wallet
  id: string
  names: Names
  /** Its paid entries: id, feed and price. */
  entries: Array<{ id: string; feed: string; price: bigint }>
}

/** Feeds of paid entries (name, how many entries) as `wallet`. */
async function creatorOf(target: Target, wallet: Wallet, feeds: Array<[string, number]>): Promise<Creator> {
  const creator: Creator = { wallet, id: '', names: { feeds: new Map(), titles: new Map(), feedOf: new Map() }, entries: [] }
  for (const [name, count] of feeds) {
    const feed = await createFeed(target, wallet, { name })
    creator.id = feed.owner_id
    creator.names.feeds.set(feed.id, name)
    for (let i = 0; i < count; i++) {
      const price = 10_000n * BigInt(1 + (i % 4))
      const title = `${name} ${i}`
      const entry = await createEntry(target, wallet, feed.id, {
        title,
        is_free: false,
        price: { amount: String(price), currency: 'USDC' },
      })
      creator.names.titles.set(entry.id, title)
      creator.names.feedOf.set(entry.id, feed.id)
      creator.entries.push({ id: entry.id, feed: feed.id, price })
    }
  }
  return creator
}

const PASS_PRICE = 50_000n
const analyticsOf = (target: Target, walletId: string, query: string, wallet: Wallet | undefined, headers: Record<string, string> = {}) =>
  call(target, 'GET', `/v1/wallets/${walletId}/analytics${query && `?${query}`}`, { wallet, headers })

describe('in process: a random market against the ledger', () => {
  let app: InProcessApp
  let creator: Creator
  let rival: Creator
  const challenges: Challenges = new Map()
  const rivalChallenges: Challenges = new Map()
  const written = { creator: 0, rival: 0 }

  beforeAll(async () => {
    app = await startInProcess()
    creator = await creatorOf(app, newWallet(), [
      ['Alpha', 8],
      ['Beta', 5],
    ])
    rival = await creatorOf(app, newWallet(), [['Gamma', 3]])
    const alpha = creator.entries[0]!.feed
    const offer = { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: DAY }
    expect((await call(app, 'PUT', `/v1/feeds/${alpha}/pass`, { wallet: creator.wallet, body: offer })).status).toBe(200)

    // The sales, written as the purchase flow records them (the ledger row; its triggers keep the tallies).
    await app.stop()
    const url = app.recordsEnv.TRELLIS_DATABASE_URL
    const directUrl = app.recordsEnv.TRELLIS_DATABASE_DIRECT_URL // behind the suite's pooler (scripts/with-pgbouncer.ts)
    const records = await openRecords(
      url ? { engine: 'postgres', url, directUrl, pool: 2 } : { engine: 'sqlite', dataDir: app.dataDir },
      'migrate',
    )
    const random = prng(39)
    const buyers = Array.from({ length: 30 }, (_, i) => `0x${(0xabcdef00 + i * 7919).toString(16).padStart(40, '0')}`.replace('0xa', '0xA'))
    await records.transact(async (tx) => {
      for (let i = 0; i < 1_500; i++) {
        const forRival = i % 8 === 7
        const seller = forRival ? rival : creator
        // Denser towards now; some on a day's first second, some on its last.
        const at =
          i % 37 === 0 ? TODAY - (i % 50) * DAY : i % 41 === 0 ? TODAY - (i % 60) * DAY - 1 : NOW - Math.floor(random() ** 2 * 80 * DAY)
        const pass = !forRival && random() < 0.1
        const entry = seller.entries[Math.floor(random() ** 1.5 * seller.entries.length)]!
        // A few buyers come back often, most once or twice.
        const payer = buyers[Math.floor(random() ** 3 * buyers.length)]!
        await tx.transactions.insert({
          id: Bun.randomUUIDv7('hex', at * 1000),
          piid: null,
          payer,
          pay_to: seller.wallet.address,
          amount: pass ? PASS_PRICE : entry.price,
          asset: 'USDC',
          entry_id: pass ? null : entry.id,
          transaction_hash: `0x${i.toString(16).padStart(64, '0')}`,
          created_at: at,
          kind: pass ? 'pass' : 'entry',
          feed_id: pass ? alpha : entry.feed,
          network: 'base-sepolia',
        })
        written[forRival ? 'rival' : 'creator']++
      }
    })
    await records.close()
    await app.restart()

    // 402s: entries read and bought without paying (one with a payment that is none), the pass asked for.
    const served = async (counts: Challenges, feed: string, entry: string | null, method: string, path: string, headers = {}) => {
      const reply = await call(app, method, path, { headers })
      expect({ path, status: reply.status }).toEqual({ path, status: 402 })
      counts.set(`${feed} ${entry ?? ''}`, (counts.get(`${feed} ${entry ?? ''}`) ?? 0) + 1)
    }
    const [e0, e1] = creator.entries
    const e9 = creator.entries[9]!
    for (let i = 0; i < 3; i++) await served(challenges, e0!.feed, e0!.id, 'GET', `/v1/feeds/${e0!.feed}/entries/${e0!.id}`)
    for (let i = 0; i < 2; i++) await served(challenges, e0!.feed, e0!.id, 'GET', `/v1/feeds/${e0!.feed}/entries/${e0!.id}/content`)
    await served(challenges, e1!.feed, e1!.id, 'GET', `/v1/feeds/${e1!.feed}/entries/${e1!.id}`, { 'x-payment': 'not-a-payment' })
    await served(challenges, e9.feed, e9.id, 'GET', `/v1/feeds/${e9.feed}/entries/${e9.id}`)
    for (let i = 0; i < 4; i++) await served(challenges, alpha, null, 'POST', `/v1/feeds/${alpha}/pass/purchases`)
    const r0 = rival.entries[0]!
    await served(rivalChallenges, r0.feed, r0.id, 'GET', `/v1/feeds/${r0.feed}/entries/${r0.id}`)
  }, 120_000)
  afterAll(() => app?.dispose())

  test('every field equals a recomputation from the ledger, for each range and interval', async () => {
    const ledger = await ledgerOf(app, creator.wallet.address)
    expect(ledger.length).toBe(written.creator)
    const ranges: Array<[string, string, number, number]> = [
      ['', 'day', TODAY + DAY - 30 * DAY, TODAY + DAY],
      [`interval=week&from=${NOW - 80 * DAY + 12_345}&to=${NOW - 3 * DAY + 777}`, 'week', 0, 0],
      [`interval=month&from=${NOW - 85 * DAY}`, 'month', 0, TODAY + DAY],
      [`interval=day&from=${TODAY - 10 * DAY - 1}&to=${TODAY - 2 * DAY}`, 'day', TODAY - 11 * DAY, TODAY - 2 * DAY],
      [`interval=week&from=${TODAY - 6 * DAY}`, 'week', TODAY - 6 * DAY, TODAY + DAY],
    ]
    ranges[1]![2] = Math.floor((NOW - 80 * DAY + 12_345) / DAY) * DAY
    ranges[1]![3] = Math.ceil((NOW - 3 * DAY + 777) / DAY) * DAY
    ranges[2]![2] = Math.floor((NOW - 85 * DAY) / DAY) * DAY
    let seen = { repeat: 0, pass: 0, challenged: 0 }
    for (const [query, interval, from, to] of ranges) {
      const reply = await analyticsOf(app, creator.id, query, creator.wallet)
      expect({ query, status: reply.status }).toEqual({ query, status: 200 })
      expect(reply.body).toEqual(expected(creator.id, ledger, challenges, creator.names, interval, from, to))
      seen = {
        repeat: seen.repeat + reply.body.totals.repeat_buyers,
        pass: seen.pass + reply.body.totals.pass_sales,
        challenged: seen.challenged + reply.body.totals.challenges,
      }
    }
    // The market holds what the comparison is about: repeat buyers, pass sales, challenges, more than ten entries.
    expect(seen.repeat * seen.pass * seen.challenged).toBeGreaterThan(0)
    expect(creator.names.titles.size).toBeGreaterThan(10)
    // The rival's figures are its own.
    const rivalLedger = await ledgerOf(app, rival.wallet.address)
    expect(rivalLedger.length).toBe(written.rival)
    const reply = await analyticsOf(app, rival.id, 'interval=week', rival.wallet)
    expect(reply.body).toEqual(expected(rival.id, rivalLedger, rivalChallenges, rival.names, 'week', TODAY + DAY - 30 * DAY, TODAY + DAY))
  })

  test('as CSV (Accept: text/csv, or format=csv): one row per sale of the range, oldest first, as the ledger has it', async () => {
    const ledger = await ledgerOf(app, creator.wallet.address)
    const from = TODAY - 85 * DAY
    const rows = ledger
      .filter((s) => s.created_at >= from)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((s) =>
        [
          new Date(s.created_at * 1000).toISOString(),
          s.feed_id,
          s.entry_id ?? '',
          s.kind,
          s.payer,
          s.amount.toString(),
          usdcDecimal(s.amount),
          NETWORK,
          s.transaction_hash,
        ].join(','),
      )
    expect(rows.length).toBeGreaterThan(1_000) // more than a page of the export
    const header = 'time,feed_id,entry_id,kind,payer,amount,amount_usdc,network,transaction_hash'
    for (const [query, headers] of [
      [`from=${from}`, { accept: 'text/csv' }],
      [`from=${from + 5}&format=csv&interval=month`, {}],
    ] as const) {
      const reply = await analyticsOf(app, creator.id, query, creator.wallet, headers)
      expect(reply.status).toBe(200)
      expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8')
      expect(reply.headers.get('content-disposition')).toStartWith('attachment; filename="trellis-sales-')
      expect(reply.text.toLowerCase()).toBe(`${[header, ...rows].join('\n')}\n`.toLowerCase())
    }
    // format=json wins over Accept.
    expect((await analyticsOf(app, creator.id, 'format=json', creator.wallet, { accept: 'text/csv' })).body.wallet_id).toBe(creator.id)
  })

  test("only the wallet itself: 401 unsigned, 403 another's signature, 404 an unknown wallet, 400 a bad range", async () => {
    expectError(await analyticsOf(app, creator.id, '', undefined), 401, 'AUTH_REQUIRED')
    expectError(await analyticsOf(app, creator.id, '', newWallet()), 403, 'UNAUTHORIZED')
    expectError(await analyticsOf(app, creator.id, 'format=csv', rival.wallet), 403, 'UNAUTHORIZED')
    expectError(await analyticsOf(app, '00000000-0000-4000-8000-000000000000', '', creator.wallet), 404, 'WALLET_NOT_FOUND')
    expectError(await analyticsOf(app, 'nope', '', creator.wallet), 400, 'INVALID_WALLET_ID')
    for (const query of [
      'interval=hour',
      'from=soon',
      'to=-5',
      `from=${NOW}&to=${NOW - DAY}`,
      `from=${TODAY}&to=${TODAY}`,
      `from=${TODAY - 366 * DAY}`, // 367 days
      'interval=month&from=0',
      `interval=week&from=${TODAY - 7 * 366 * DAY}`,
      'format=xml',
    ])
      expectError(await analyticsOf(app, creator.id, query, creator.wallet), 400, 'INVALID_PARAMETER')
    // At the limit: 366 days, 366 weeks.
    expect((await analyticsOf(app, creator.id, `from=${TODAY - 365 * DAY}`, creator.wallet)).body.series.length).toBe(366)
    const weeks = await analyticsOf(app, creator.id, `interval=week&from=${TODAY - 7 * 365 * DAY}`, creator.wallet)
    expect([weeks.status, weeks.body.series.length]).toEqual([200, startsOf('week', TODAY - 7 * 365 * DAY, TODAY + DAY).length])
  })
})

describe('on a spawned server: the hot routes count their 402s; trellis mcp tells the operator', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  }, 60_000)
  afterAll(async () => {
    await closeClients()
    await server?.dispose()
  })

  test('402s of entries and passes (hot routes, browser page) add up in totals, entries and feeds; get_analytics says so', async () => {
    const key = generatePrivateKey()
    const owner = await creatorOf(server.url, privateKeyToAccount(key), [['Hot', 2]])
    const [entry, other] = owner.entries
    const feed = entry!.feed
    const offer = { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: DAY }
    expect((await call(server.url, 'PUT', `/v1/feeds/${feed}/pass`, { wallet: owner.wallet, body: offer })).status).toBe(200)
    const asked = async (method: string, path: string, headers: Record<string, string> = {}) =>
      (await fetch(`${server.url}${path}`, { method, headers })).status
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push(await asked('GET', `/v1/feeds/${feed}/entries/${entry!.id}`))
    for (let i = 0; i < 3; i++) statuses.push(await asked('GET', `/v1/feeds/${feed}/entries/${entry!.id}/content`))
    for (let i = 0; i < 5; i++) statuses.push(await asked('POST', `/v1/feeds/${feed}/pass/purchases`))
    statuses.push(await asked('GET', `/feeds/${feed}/entries/${other!.id}`, { accept: 'text/html' }))
    expect(statuses).toEqual(Array(15).fill(402))

    const reply = await analyticsOf(server.url, owner.id, 'interval=month', owner.wallet)
    expect(reply.status).toBe(200)
    expect(reply.body.totals).toMatchObject({ sales: 0, challenges: 15 })
    expect(reply.body.series.at(-1).challenges).toBe(15)
    const title = (id: string) => owner.names.titles.get(id)
    expect(reply.body.top_entries).toEqual([
      { entry_id: entry!.id, title: title(entry!.id), sales: 0, revenue: '0', challenges: 9 },
      { entry_id: other!.id, title: title(other!.id), sales: 0, revenue: '0', challenges: 1 },
    ])
    expect(reply.body.top_feeds).toEqual([{ feed_id: feed, name: 'Hot', sales: 0, revenue: '0', challenges: 15 }])

    const { client } = await stdioClient(server.url, { TRELLIS_MCP_WALLET_KEY: key })
    const told = (await data(client, 'get_analytics', { interval: 'week' })).analytics
    expect(told).toMatchObject({
      wallet_id: owner.id,
      interval: 'week',
      totals: { challenges: 15, revenue: '0', revenue_usdc: '0.000000' },
    })
    expect(told.top_feeds).toEqual([{ ...reply.body.top_feeds[0], revenue_usdc: '0.000000' }])
  }, 60_000)
})
