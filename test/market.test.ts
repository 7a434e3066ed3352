// A scripted market over five eras of server time (40 days ago, 20 days ago, 3 days ago, 6 hours ago, now), with
// real x402 purchases on a local chain. Every leaderboard and the wallet statistics are checked against figures the
// test computes itself from the log of what it did (feeds, entries, purchases, deletions), following the seed and
// the rules in the headers of src/domain/leaderboards.ts and src/domain/wallet-stats.ts:
// - feed boards: active feeds only, those with activity in the period; ties: more purchases, then the older feed,
//   then the smaller id;
// - top-providers: owners by revenue from their active feeds in the period; top-buyers: payers by amount spent in
//   the period, then purchases, then the earlier wallet;
// - category-stats: active categories over their active feeds, all time, by revenue then name;
// - wallet ranks: competition ranking over all wallets (ties share a rank).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type Buyer, type TestChain } from '../dev/chain.ts'

const DAY = 86_400
const ADMIN_KEY = 'market-test-admin-key'
const PERIODS = ['1d', '7d', '30d', 'all'] as const
type Period = (typeof PERIODS)[number]
const PERIOD_S: Record<Period, number> = { '1d': DAY, '7d': 7 * DAY, '30d': 30 * DAY, all: Infinity }

interface Category {
  id: string
  name: string
  description: string | null
  icon_url: string | null
}
interface Actor {
  label: string
  wallet: Wallet
  username: string | null
  id: string
  created_at: number
  updated_at: number
}
interface FeedRec {
  key: string
  id: string
  owner: Actor
  category: Category | null
  name: string
  description: string | null
  tags: string[]
  created_at: number
  updated_at: number
  deleted: boolean
}
interface EntryRec {
  key: string
  id: string
  feed: FeedRec
  cid: string
  mime_type: string
  title: string
  tags: string[]
  free: boolean
  price: bigint
  content: string
  size: number
  created_at: number
  deleted: boolean
}
interface Sale {
  buyer: Actor
  entry: EntryRec
  amount: bigint
  created_at: number
}

let chain: TestChain
let server: TestServer
let offset = 0 // seconds the server clock is shifted by, in the current era
const categories: Category[] = []
const feeds: FeedRec[] = []
const entries: EntryRec[] = []
const sales: Sale[] = []
const actors: Record<string, Actor> = {}
let buildMs = 0

const env = (clockOffset: number) => ({
  ...chain.env,
  TRELLIS_STATS_REFRESH_S: '1',
  TRELLIS_RANKINGS_REFRESH_S: '1',
  TRELLIS_ADMIN_KEY: ADMIN_KEY,
  TRELLIS_LOG: 'debug',
  TRELLIS_TEST_CLOCK_OFFSET_S: String(clockOffset),
})
const realNow = () => Math.floor(Date.now() / 1000)

async function era(clockOffset: number) {
  offset = clockOffset
  await server.restart(env(clockOffset))
}

/** Signed request whose x-timestamp is the server's (shifted) time. */
async function signed(wallet: Wallet, method: string, path: string, body?: unknown) {
  const nonce = await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: wallet.address } })
  if (nonce.status !== 200 && nonce.status !== 201) throw new Error(`nonce: ${nonce.status} ${nonce.text}`)
  const signature = await wallet.signMessage({ message: nonce.body.message })
  const headers = {
    'x-wallet-address': wallet.address,
    'x-signature': signature,
    'x-message': nonce.body.message,
    'x-timestamp': String(realNow() + offset),
    'x-chain-id': '84532',
  }
  return call(server.url, method, path, { headers, body })
}

const actor = (label: string, wallet: Wallet): Actor =>
  (actors[label] = { label, wallet, username: null, id: '', created_at: 0, updated_at: 0 })

async function setUsername(a: Actor, username: string) {
  const reply = await signed(a.wallet, 'PATCH', `/v1/wallets/${a.id}`, { username })
  if (reply.status !== 200) throw new Error(`PATCH wallet: ${reply.status} ${reply.text}`)
  expect(reply.body.username).toBe(username)
  a.username = username
}

async function makeFeed(key: string, owner: Actor, category: Category | null, plain = false): Promise<FeedRec> {
  const body: Record<string, unknown> = { name: `Feed ${key}` }
  if (!plain) Object.assign(body, { description: `all about ${key}`, tags: [key.toLowerCase(), 'market'] })
  if (category) body.category_id = category.id
  const reply = await signed(owner.wallet, 'POST', '/v1/feeds', body)
  if (reply.status !== 201) throw new Error(`create feed ${key}: ${reply.status} ${reply.text}`)
  // The record is dated by the shifted server clock.
  expect(Math.abs(reply.body.created_at - (realNow() + offset))).toBeLessThanOrEqual(5)
  owner.id = reply.body.owner_id
  const feed: FeedRec = {
    key,
    id: reply.body.id,
    owner,
    category,
    name: `Feed ${key}`,
    description: plain ? null : `all about ${key}`,
    tags: plain ? [] : [key.toLowerCase(), 'market'],
    created_at: reply.body.created_at,
    updated_at: reply.body.updated_at,
    deleted: false,
  }
  feeds.push(feed)
  return feed
}

async function makeEntry(key: string, feed: FeedRec, price?: number, mime = 'text/plain'): Promise<EntryRec> {
  const content = `entry ${key} ${'.'.repeat(entries.length * 7)}`
  const body: Record<string, unknown> = {
    content_base64: b64(content),
    mime_type: mime,
    title: `Entry ${key}`,
    tags: [key],
    is_free: price === undefined,
    ...(price === undefined ? {} : { price: { amount: String(price), currency: 'USDC' } }),
  }
  const reply = await signed(feed.owner.wallet, 'POST', `/v1/feeds/${feed.id}/entries`, body)
  if (reply.status !== 201) throw new Error(`create entry ${key}: ${reply.status} ${reply.text}`)
  const entry: EntryRec = {
    key,
    id: reply.body.id,
    feed,
    cid: reply.body.cid,
    mime_type: mime,
    title: `Entry ${key}`,
    tags: [key],
    free: price === undefined,
    price: BigInt(price ?? 0),
    content,
    size: Buffer.byteLength(content),
    created_at: reply.body.created_at,
    deleted: false,
  }
  entries.push(entry)
  return entry
}

async function buy(buyer: Actor, entry: EntryRec) {
  const real = BigInt(realNow())
  const serverNow = real + BigInt(offset)
  const validAfter = (real < serverNow ? real : serverNow) - 600n
  const validBefore = (real > serverNow ? real : serverNow) + 300n
  const payment = await v1Payment(buyer.wallet as Buyer, {
    to: entry.feed.owner.wallet.address,
    value: entry.price,
    validAfter,
    validBefore,
  })
  const response = await fetch(`${server.url}/v1/feeds/${entry.feed.id}/entries/${entry.id}/content`, {
    headers: { 'x-payment': encodePaymentHeader(payment) },
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${buyer.label} buys ${entry.key}: ${response.status} ${text}`)
  expect(text).toBe(entry.content)
  sales.push({ buyer, entry, amount: entry.price, created_at: 0 })
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations, from the log only.

const within = (p: Period, at: number) => p === 'all' || realNow() - at <= PERIOD_S[p]
const activeFeeds = () => feeds.filter((f) => !f.deleted)
const liveEntries = (f: FeedRec) => (f.deleted ? [] : entries.filter((e) => e.feed === f && !e.deleted))
const total = (xs: Sale[]) => xs.reduce((n, s) => n + s.amount, 0n)
const distinct = <T>(xs: T[]) => new Set(xs).size
const desc = (a: bigint, b: bigint) => (a > b ? -1 : a < b ? 1 : 0)
const olderFeedFirst = (a: FeedRec, b: FeedRec) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)
const earlierWalletFirst = (a: Actor, b: Actor) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)
const usdc = (amount: bigint) => (Number(amount) / 1e6).toFixed(6)

function feedsInPeriod(p: Period) {
  return activeFeeds()
    .map((f) => {
      const s = sales.filter((x) => x.entry.feed === f && within(p, x.created_at))
      return { f, purchases: s.length, revenue: total(s), buyers: distinct(s.map((x) => x.buyer)) }
    })
    .filter((x) => x.purchases > 0)
}

const feedRef = (f: FeedRec) => ({
  owner_id: f.owner.id,
  owner_username: f.owner.username,
  owner_wallet: f.owner.wallet.address,
  category_id: f.category?.id ?? null,
  category_name: f.category?.name ?? null,
  description: f.description,
  image_cid: null,
  is_active: true,
  tags: f.tags,
  total_entries: liveEntries(f).length,
})
const allTime = (f: FeedRec) => sales.filter((s) => s.entry.feed === f)

function expectedMostPopular(p: Period) {
  return feedsInPeriod(p)
    .sort((a, b) => b.purchases - a.purchases || olderFeedFirst(a.f, b.f))
    .map((x, i) => ({
      rank: String(i + 1),
      feed_id: x.f.id,
      feed_name: x.f.name,
      id: x.f.id,
      name: x.f.name,
      feed: x.f.name,
      ...feedRef(x.f),
      total_purchases: String(x.purchases),
      total_revenue: String(x.revenue),
      unique_buyers: String(x.buyers),
      avg_revenue_per_purchase: String(x.revenue / BigInt(x.purchases)),
      created_at: x.f.created_at,
      updated_at: x.f.updated_at,
    }))
}

const byRevenue = (p: Period) =>
  feedsInPeriod(p).sort((a, b) => desc(a.revenue, b.revenue) || b.purchases - a.purchases || olderFeedFirst(a.f, b.f))

function expectedTopRevenue(p: Period) {
  return byRevenue(p).map((x, i) => ({
    rank: String(i + 1),
    feed_id: x.f.id,
    feed_name: x.f.name,
    id: x.f.id,
    name: x.f.name,
    feed: x.f.name,
    ...feedRef(x.f),
    total_purchases: String(x.purchases),
    total_revenue: String(x.revenue),
    unique_buyers: String(x.buyers),
    feed_created_at: x.f.created_at,
    feed_updated_at: x.f.updated_at,
  }))
}

function expectedTrending() {
  return byRevenue('7d').map((x, i) => ({
    rank: String(i + 1),
    id: x.f.id,
    owner_id: x.f.owner.id,
    owner_wallet: x.f.owner.wallet.address,
    owner_username: x.f.owner.username,
    category_id: x.f.category?.id ?? null,
    category_name: x.f.category?.name ?? null,
    name: x.f.name,
    description: x.f.description,
    image_cid: null,
    is_active: true,
    total_entries: liveEntries(x.f).length,
    total_purchases: allTime(x.f).length,
    total_revenue: String(total(allTime(x.f))),
    tags: x.f.tags,
    created_at: x.f.created_at,
    updated_at: x.f.updated_at,
    purchases_last_7d: String(x.purchases),
    revenue_last_7d: String(x.revenue),
    unique_buyers_last_7d: String(x.buyers),
  }))
}

function expectedTopFeeds() {
  return activeFeeds()
    .filter((f) => liveEntries(f).length > 0)
    .sort((a, b) => liveEntries(b).length - liveEntries(a).length || allTime(b).length - allTime(a).length || olderFeedFirst(a, b))
    .map((f) => ({
      id: f.id,
      owner_id: f.owner.id,
      category_id: f.category?.id ?? null,
      name: f.name,
      description: f.description,
      image_cid: null,
      is_active: true,
      total_entries: liveEntries(f).length,
      total_purchases: allTime(f).length,
      total_revenue: String(total(allTime(f))),
      tags: f.tags,
      created_at: f.created_at,
      updated_at: f.updated_at,
      owner_wallet: f.owner.wallet.address,
      owner_username: f.owner.username,
      category_name: f.category?.name ?? null,
    }))
}

function expectedTopProviders(p: Period) {
  return Object.values(actors)
    .map((a) => {
      const s = sales.filter((x) => x.entry.feed.owner === a && !x.entry.feed.deleted && within(p, x.created_at))
      return { a, purchases: s.length, revenue: total(s), buyers: distinct(s.map((x) => x.buyer)) }
    })
    .filter((x) => x.purchases > 0)
    .sort((x, y) => desc(x.revenue, y.revenue) || y.purchases - x.purchases || earlierWalletFirst(x.a, y.a))
    .map((x, i) => {
      const mine = activeFeeds().filter((f) => f.owner === x.a)
      return {
        rank: String(i + 1),
        user_id: x.a.id,
        username: x.a.username,
        wallet_address: x.a.wallet.address,
        total_feeds: String(mine.length),
        total_entries: String(mine.reduce((n, f) => n + liveEntries(f).length, 0)),
        total_purchases: String(x.purchases),
        total_revenue: String(x.revenue),
        unique_buyers: String(x.buyers),
        joined_at: x.a.created_at,
      }
    })
}

function expectedTopBuyers(p: Period) {
  return Object.values(actors)
    .map((a) => ({ a, s: sales.filter((x) => x.buyer === a && within(p, x.created_at)) }))
    .filter((x) => x.s.length > 0)
    .sort((x, y) => desc(total(x.s), total(y.s)) || y.s.length - x.s.length || earlierWalletFirst(x.a, y.a))
    .map((x, i) => ({
      rank: String(i + 1),
      user_id: x.a.id,
      username: x.a.username,
      wallet_address: x.a.wallet.address,
      total_purchases: String(x.s.length),
      total_spent: String(total(x.s)),
      unique_entries_purchased: String(distinct(x.s.map((s) => s.entry))),
      unique_feeds_purchased_from: String(distinct(x.s.map((s) => s.entry.feed))),
      joined_at: x.a.created_at,
    }))
}

function expectedCategoryStats(inactive: Set<string>) {
  return categories
    .filter((c) => !inactive.has(c.id))
    .map((c) => {
      const inside = activeFeeds().filter((f) => f.category === c)
      const s = sales.filter((x) => inside.includes(x.entry.feed))
      const revenue = total(s)
      return {
        category_id: c.id,
        category_name: c.name,
        category_description: c.description,
        category_icon_url: c.icon_url,
        total_feeds: String(inside.length),
        total_providers: String(distinct(inside.map((f) => f.owner))),
        total_entries: String(inside.reduce((n, f) => n + liveEntries(f).length, 0)),
        total_purchases: String(s.length),
        total_revenue: String(revenue),
        unique_buyers: String(distinct(s.map((x) => x.buyer))),
        avg_purchase_amount: s.length ? String(revenue / BigInt(s.length)) : '0',
      }
    })
    .sort((a, b) => desc(BigInt(a.total_revenue), BigInt(b.total_revenue)) || (a.category_name < b.category_name ? -1 : 1))
}

function expectedRecentEntries() {
  return entries
    .filter((e) => !e.deleted && !e.feed.deleted)
    .reverse()
    .map((e) => {
      const s = sales.filter((x) => x.entry === e)
      return {
        id: e.id,
        feed_id: e.feed.id,
        cid: e.cid,
        mime_type: e.mime_type,
        title: e.title,
        description: null,
        metadata: null,
        tags: e.tags,
        is_free: e.free,
        expires_at: null,
        is_active: true,
        total_purchases: s.length,
        total_revenue: String(total(s)),
        price: e.free ? '0' : String(e.price),
        asset: 'USDC',
        created_at: e.created_at,
        updated_at: e.created_at,
        feed_name: e.feed.name,
        feed_owner_id: e.feed.owner.id,
        owner_wallet: e.feed.owner.wallet.address,
        category_name: e.feed.category?.name ?? null,
      }
    })
}

/** Competition rank: 1 + the number of wallets strictly ahead. */
const competitionRank = (value: (a: Actor) => number | bigint, a: Actor) =>
  1 + Object.values(actors).filter((o) => value(o) > value(a)).length

function expectedStats(a: Actor, generatedAt: number) {
  const mine = activeFeeds().filter((f) => f.owner === a)
  const live = mine.flatMap(liveEntries)
  const paid = live.filter((e) => !e.free)
  const received = (o: Actor) => sales.filter((s) => s.entry.feed.owner === o)
  const made = (o: Actor) => sales.filter((s) => s.buyer === o)
  const entriesOf = (o: Actor) =>
    activeFeeds()
      .filter((f) => f.owner === o)
      .reduce((n, f) => n + liveEntries(f).length, 0)
  const revenue = total(received(a))
  const spent = total(made(a))
  const events = [
    ...feeds.filter((f) => f.owner === a).map((f) => f.created_at), // deleted ones too: creating them was activity
    ...entries.filter((e) => e.feed.owner === a).map((e) => e.created_at),
    ...received(a).map((s) => s.created_at),
    ...made(a).map((s) => s.created_at),
  ]
  const ranks = {
    revenue_rank: competitionRank((o) => total(received(o)), a),
    content_rank: competitionRank(entriesOf, a),
    buyer_rank: competitionRank((o) => made(o).length, a),
  }
  const content = {
    total_feeds: mine.length,
    total_entries: live.length,
    free_entries: live.length - paid.length,
    paid_entries: paid.length,
    total_content_size: live.reduce((n, e) => n + e.size, 0),
  }
  return {
    wallet_id: a.id,
    address: a.wallet.address,
    network: 'base-sepolia',
    generated_at: generatedAt,
    content_stats: content,
    revenue_stats: {
      total_revenue: String(revenue),
      revenue_usdc: usdc(revenue),
      unique_buyers: distinct(received(a).map((s) => s.buyer)),
      total_purchases_received: received(a).length,
      average_entry_price: paid.length ? String(paid.reduce((n, e) => n + e.price, 0n) / BigInt(paid.length)) : '0',
    },
    purchase_stats: {
      total_spent: String(spent),
      spent_usdc: usdc(spent),
      unique_sellers: distinct(made(a).map((s) => s.entry.feed.owner)),
      total_purchases_made: made(a).length,
      average_purchase_amount: made(a).length ? String(spent / BigInt(made(a).length)) : '0',
    },
    rankings: ranks,
    activity: {
      first_activity: events.length ? Math.min(...events) : 0,
      last_activity: events.length ? Math.max(...events) : 0,
      active_days: distinct(events.map((t) => Math.floor(t / DAY))),
    },
    total_feeds_created: content.total_feeds,
    total_entries_published: content.total_entries,
    total_revenue_earned: String(revenue),
    total_items_sold: received(a).length,
    unique_buyers_count: distinct(received(a).map((s) => s.buyer)),
    total_purchases_made: made(a).length,
    total_amount_spent: String(spent),
    unique_feeds_purchased_from: distinct(made(a).map((s) => s.entry.feed)),
    revenue_rank: ranks.revenue_rank,
    purchases_rank: ranks.buyer_rank,
    last_calculated_at: generatedAt,
    created_at: a.created_at,
    updated_at: a.updated_at,
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The market.

const inactiveCategories = new Set<string>()

beforeAll(async () => {
  const started = performance.now()
  chain = await startChain()
  offset = -40 * DAY
  server = await startTestServer(env(offset))
  const listed = await call(server.url, 'GET', '/v1/categories?page_size=100')
  for (const c of listed.body.data) categories.push({ id: c.id, name: c.name, description: c.description, icon_url: c.icon_url })
  const cat = (name: string) => categories.find((c) => c.name === name)!

  const alice = actor('alice', newWallet())
  const bob = actor('bob', newWallet())
  const cyril = actor('cyril', newWallet()) // never sets a username
  const idle = actor('idle', newWallet())
  const buyers = await Promise.all(
    ['carol', 'b2', 'b3', 'b4', 'b5'].map(async (label) => actor(label, await chain.newFundedBuyer(1_000_000n))),
  )
  const [carol, b2, b3, b4, b5] = buyers
  const walletIdOf = async (a: Actor) => {
    const reply = await call(server.url, 'GET', `/v1/wallets/address/${a.wallet.address}`)
    expect(reply.status).toBe(200)
    a.id = reply.body.id
  }

  // Era 1: 40 days ago.
  const f1 = await makeFeed('F1', alice, cat('Finance'))
  const f2 = await makeFeed('F2', alice, cat('Sports'))
  const f5 = await makeFeed('F5', cyril, cat('Games'))
  const e1a = await makeEntry('e1a', f1, 10_000)
  const e1b = await makeEntry('e1b', f1, 25_000)
  await makeEntry('e1c', f1, undefined, 'text/markdown')
  const e2a = await makeEntry('e2a', f2, 40_000)
  const e2b = await makeEntry('e2b', f2)
  const e5a = await makeEntry('e5a', f5, 21_000)
  await makeEntry('e5b', f5)
  await setUsername(alice, 'alice')
  await buy(carol, e1a)
  await buy(b2, e1a)
  await buy(carol, e5a)
  await walletIdOf(carol)
  await walletIdOf(b2)
  await setUsername(carol, 'carol')

  // Era 2: 20 days ago.
  await era(-20 * DAY)
  const f3 = await makeFeed('F3', bob, cat('Finance'))
  const fd = await makeFeed('FD', bob, cat('Sports')) // deleted at the end, after it sold
  const e3a = await makeEntry('e3a', f3, 30_000)
  const e3b = await makeEntry('e3b', f3, 33_000)
  const eDa = await makeEntry('eDa', fd, 50_000)
  await setUsername(bob, 'bob')
  await buy(b3, e3a)
  await buy(carol, e2a)
  await buy(b2, e1b)
  await walletIdOf(b3)

  // Era 3: 3 days ago.
  await era(-3 * DAY)
  const f4 = await makeFeed('F4', bob, cat('Tech'))
  const e4a = await makeEntry('e4a', f4, 40_000)
  await makeEntry('e4b', f4)
  await makeEntry('e4c', f4, undefined, 'application/json')
  await makeEntry('e4d', f4)
  const e1d = await makeEntry('e1d', f1, 23_000)
  const f7 = await makeFeed('F7', idle, cat('Tech'))
  expect((await signed(idle.wallet, 'DELETE', `/v1/feeds/${f7.id}`)).status).toBe(204)
  f7.deleted = true
  await buy(b2, e4a)
  await buy(b3, e3b)
  await buy(b4, e1b)
  await walletIdOf(b4)

  // Era 4: 6 hours ago.
  await era(-6 * 3600)
  const f6 = await makeFeed('F6', cyril, null)
  const e6a = await makeEntry('e6a', f6, 7_000)
  const e6b = await makeEntry('e6b', f6, 7_000)
  await buy(carol, e3a)
  await buy(b4, eDa)
  await buy(b3, e6a)

  // Era 5: now.
  await era(0)
  const f8 = await makeFeed('F8', alice, cat('Sports'))
  await makeEntry('e8a', f8)
  await makeFeed('F9', bob, cat('Tech'), true) // no entries, no description, no tags
  await buy(b4, e6b)
  await buy(b5, eDa)
  await buy(b5, e6b)
  await buy(carol, e1d)
  await walletIdOf(b5)
  expect((await signed(bob.wallet, 'DELETE', `/v1/feeds/${fd.id}`)).status).toBe(204)
  fd.deleted = true
  expect((await signed(alice.wallet, 'DELETE', `/v1/feeds/${f2.id}/entries/${e2b.id}`)).status).toBe(204)
  e2b.deleted = true
  const games = await call(server.url, 'PATCH', `/v1/categories/${cat('Games').id}`, {
    headers: { 'admin-api-key': ADMIN_KEY },
    body: { is_active: false },
  })
  expect(games.status).toBe(200)
  expect(games.body.is_active).toBe(false)
  inactiveCategories.add(cat('Games').id)
  const lastChange = realNow()

  // Timestamps the log does not know yet, read from the API: purchases (the ledger), wallets, feeds.
  for (const b of buyers) {
    const ledger = await call(server.url, 'GET', `/v1/transactions?payer=${b.wallet.address}&page_size=100`)
    const mine = sales.filter((s) => s.buyer === b)
    expect(ledger.body.transactions).toHaveLength(mine.length)
    expect(ledger.body.data).toEqual(ledger.body.transactions) // the same list where the official SDK reads it
    for (const s of mine) {
      const row = ledger.body.transactions.find((t: any) => t.entry_id === s.entry.id)
      expect(row).toMatchObject({ payer: b.wallet.address, pay_to: s.entry.feed.owner.wallet.address, amount: String(s.amount) })
      s.created_at = row.created_at
    }
  }
  for (const a of Object.values(actors)) {
    const reply = await call(server.url, 'GET', `/v1/wallets/${a.id}`)
    expect(reply.status).toBe(200)
    a.created_at = reply.body.created_at
    a.updated_at = reply.body.updated_at
    // A wallet is born with its first feed or its first purchase.
    const births = [
      ...feeds.filter((f) => f.owner === a).map((f) => f.created_at),
      ...sales.filter((s) => s.buyer === a).map((s) => s.created_at),
    ]
    expect(a.created_at).toBe(Math.min(...births))
  }
  for (const f of activeFeeds()) f.updated_at = (await call(server.url, 'GET', `/v1/feeds/${f.id}`)).body.updated_at
  buildMs = performance.now() - started

  // Wallet statistics are live; leaderboards and ranks are snapshots (both refresh every second here). Wait until
  // both jobs finished a run that started after the last change (lastChange is a whole second; a run takes ms).
  const deadline = Date.now() + 5_000
  for (;;) {
    const jobs = (await call(server.url, 'GET', '/health')).body.jobs
    if (jobs.stats.last_run > lastChange + 1 && jobs.rankings.last_run > lastChange + 1) break
    if (Date.now() > deadline) throw new Error(`no fresh snapshot in 5 s: ${JSON.stringify(jobs)}`)
    await Bun.sleep(100)
  }
})

afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const board = (path: string) => call(server.url, 'GET', `/v1/leaderboards/${path}`)
/** The script's name for a feed or wallet id (F1, alice, ...). */
const label = (id: string): string => feeds.find((f) => f.id === id)?.key ?? Object.values(actors).find((a) => a.id === id)?.label ?? id

describe('the market', () => {
  test('is what the script made (sanity of the log)', () => {
    console.log(
      `market built in ${(buildMs / 1000).toFixed(1)} s: ${feeds.length} feeds, ${entries.length} entries, ${sales.length} purchases`,
    )
    expect(sales).toHaveLength(16)
    expect(sales.every((s) => s.created_at > 0)).toBe(true)
    // The eras landed where the periods need them.
    const ages = sales.map((s) => realNow() - s.created_at)
    expect(ages.filter((a) => a <= DAY)).toHaveLength(7)
    expect(ages.filter((a) => a <= 7 * DAY)).toHaveLength(10)
    expect(ages.filter((a) => a <= 30 * DAY)).toHaveLength(13)
  })
})

describe('leaderboards with a period', () => {
  const cases = [
    ['most-popular', expectedMostPopular],
    ['top-revenue', expectedTopRevenue],
    ['top-providers', expectedTopProviders],
    ['top-buyers', expectedTopBuyers],
  ] as const
  for (const [path, expected] of cases) {
    for (const period of PERIODS) {
      test(`${path}?period=${period}`, async () => {
        const reply = await board(`${path}?period=${period}`)
        expect(reply.status).toBe(200)
        expect(Object.keys(reply.body).sort()).toEqual(['data', 'period'])
        expect(reply.body.period).toBe(period)
        const want = expected(period)
        expect(want.length).toBeGreaterThan(0)
        // First the order with the figures that decide it (readable on failure), then every field with its JSON type.
        const summary = (items: any[]) =>
          items.map(
            (i) =>
              `${label(i.feed_id ?? i.user_id)} purchases=${i.total_purchases} ` +
              `amount=${i.total_revenue ?? i.total_spent} ` +
              `created=${i.created_at ?? i.feed_created_at ?? i.joined_at}`,
          )
        expect(summary(reply.body.data)).toEqual(summary(want))
        expect(reply.body.data).toEqual(want)
      })
    }
    test(`${path}: default period is all; page_size limits; bad period and page_size are 400 INVALID_PARAMETER`, async () => {
      const all = await board(`${path}?period=all`)
      const byDefault = await board(path)
      expect(byDefault.body).toEqual(all.body)
      const one = await board(`${path}?page_size=1&period=all`)
      expect(one.status).toBe(200)
      expect(one.body.data).toEqual(all.body.data.slice(0, 1))
      const two = await board(`${path}?page_size=2&period=7d`)
      expect(two.body.data).toHaveLength(2)
      expect(two.body.period).toBe('7d')
      for (const query of ['period=2d', 'page_size=101', 'page_size=0', 'page_size=abc']) {
        const bad = await board(`${path}?${query}`)
        expect(bad.status, query).toBe(400)
        expect(bad.body.code, query).toBe('INVALID_PARAMETER')
        expect(typeof bad.body.error).toBe('string')
      }
    })
  }
})

describe('leaderboards without a period', () => {
  test('trending: active feeds by 7-day revenue', async () => {
    const reply = await board('trending')
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const want = expectedTrending()
    expect(reply.body.data.map((f: any) => f.name)).toEqual(want.map((f) => f.name))
    expect(reply.body.data).toEqual(want)
    expect((await board('trending?page_size=1')).body.data).toEqual(want.slice(0, 1))
    expect((await board('trending?page_size=101')).body.code).toBe('INVALID_PARAMETER')
  })

  test('top-feeds: active feeds by entries, no rank field', async () => {
    const reply = await board('top-feeds')
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const want = expectedTopFeeds()
    const summary = (items: any[]) =>
      items.map((f) => `${label(f.id)} entries=${f.total_entries} purchases=${f.total_purchases} created=${f.created_at}`)
    expect(summary(reply.body.data)).toEqual(summary(want))
    expect(reply.body.data).toEqual(want)
    expect(reply.body.data.every((f: any) => !('rank' in f))).toBe(true)
    expect((await board('top-feeds?page_size=2')).body.data).toEqual(want.slice(0, 2))
    const bad = await board('top-feeds?page_size=101')
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('INVALID_PARAMETER')
  })

  test('category-stats: active categories over active feeds, by revenue then name', async () => {
    const reply = await board('category-stats')
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const want = expectedCategoryStats(inactiveCategories)
    expect(reply.body.data.map((c: any) => c.category_name)).toEqual(want.map((c) => c.category_name))
    expect(reply.body.data).toEqual(want)
    expect(reply.body.data.map((c: any) => c.category_name)).not.toContain('Games')
  })

  test('recent-entries: newest first, active entries of active feeds, walked to the end', async () => {
    const want = expectedRecentEntries()
    const first = await board('recent-entries')
    expect(first.status).toBe(200)
    expect(Object.keys(first.body).sort()).toEqual(['data', 'pagination'])
    expect(first.body.data).toEqual(want) // fewer than the default page of 20
    expect(first.body.pagination).toEqual({ page_size: want.length, next_page_token: null, has_more: false })

    const walked: any[] = []
    let token: string | null = null
    let pages = 0
    do {
      const reply: any = await board(`recent-entries?page_size=5${token ? `&page_token=${encodeURIComponent(token)}` : ''}`)
      expect(reply.status).toBe(200)
      const { pagination, data } = reply.body
      expect(pagination.page_size).toBe(data.length)
      expect(pagination.has_more).toBe(pagination.next_page_token !== null)
      if (pagination.next_page_token !== null) expect(data).toHaveLength(5)
      walked.push(...data)
      token = pagination.next_page_token
      pages++
    } while (token !== null && pages < 20)
    expect(pages).toBe(Math.ceil(want.length / 5))
    expect(walked).toEqual(want)
    for (let i = 1; i < walked.length; i++) expect(walked[i - 1].created_at).toBeGreaterThanOrEqual(walked[i].created_at)

    expect((await board('recent-entries?page_size=101')).body.code).toBe('INVALID_PARAMETER')
    const forged = await board('recent-entries?page_token=nope')
    expect(forged.status).toBe(422)
    expect(forged.body.code).toBe('INVALID_PAGE_TOKEN')
  })
})

describe('wallet statistics', () => {
  for (const label of ['alice', 'bob', 'cyril', 'idle', 'carol', 'b2', 'b3', 'b4', 'b5']) {
    test(`${label}`, async () => {
      const a = actors[label]
      const reply = await call(server.url, 'GET', `/v1/wallets/${a.id}/stats`)
      expect(reply.status).toBe(200)
      expect(typeof reply.body.generated_at).toBe('number')
      expect(Math.abs(reply.body.generated_at - realNow())).toBeLessThanOrEqual(2)
      expect(reply.body).toEqual(expectedStats(a, reply.body.generated_at))
    })
  }

  test('ranks are competition ranks (ties share a rank, the next one skips)', async () => {
    const ranks: Record<string, any> = {}
    for (const a of Object.values(actors)) ranks[a.label] = (await call(server.url, 'GET', `/v1/wallets/${a.id}/stats`)).body.rankings
    // Spelled out for this market: alice and bob publish 6 entries each, cyril 4; carol bought 5, b2-b4 3 each, b5 2.
    expect([ranks.alice.content_rank, ranks.bob.content_rank, ranks.cyril.content_rank, ranks.idle.content_rank]).toEqual([1, 1, 3, 4])
    expect(['carol', 'b2', 'b3', 'b4', 'b5', 'alice'].map((l) => ranks[l].buyer_rank)).toEqual([1, 2, 2, 2, 5, 6])
    expect(['bob', 'alice', 'cyril', 'idle', 'carol'].map((l) => ranks[l].revenue_rank)).toEqual([1, 2, 3, 4, 4])
  })

  test('400 INVALID_WALLET_ID for a malformed id, 404 WALLET_NOT_FOUND for an unknown one', async () => {
    const bad = await call(server.url, 'GET', '/v1/wallets/not-a-uuid/stats')
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('INVALID_WALLET_ID')
    const missing = await call(server.url, 'GET', `/v1/wallets/${crypto.randomUUID()}/stats`)
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('WALLET_NOT_FOUND')
  })
})

describe('samples', () => {
  test('one leaderboard, one stats answer, and the rebuild time', async () => {
    console.log('GET /v1/leaderboards/top-providers?period=all\n' + JSON.stringify((await board('top-providers?period=all')).body, null, 2))
    console.log(
      `GET /v1/wallets/{alice}/stats\n` +
        JSON.stringify((await call(server.url, 'GET', `/v1/wallets/${actors.alice.id}/stats`)).body, null, 2),
    )
    const rebuilt = server.logs
      .map((line) => {
        try {
          return JSON.parse(line)
        } catch {
          return null
        }
      })
      .filter((l) => l?.msg === 'stats and leaderboards rebuilt')
    expect(rebuilt.length).toBeGreaterThan(0)
    const ms = rebuilt.map((l) => l.ms as number)
    console.log(`stats and leaderboards rebuilt: last ${ms[ms.length - 1]} ms, max ${Math.max(...ms)} ms over ${ms.length} rebuilds`)
  })
})
