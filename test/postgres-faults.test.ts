// PostgreSQL failing under a running server: restarted under load, requests in flight answer 503 with a Retry-After,
// nothing is half-written, and the server serves again without a restart; a purchase whose recording transaction is
// killed (pg_terminate_backend) stays pending until the reconciler lets the chain decide it; a crash takes the nonces
// (UNLOGGED) and nothing else. And the connections a server opens, whatever it is asked. These tests stop and kill
// parts of a cluster, so they run on a throwaway cluster of their own, on either pass of the suite.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { CID } from 'multiformats/cid'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { TEST_POSTGRES, emptyDatabase } from '../dev/test-database.ts'
import { withRecords } from '../dev/records-sql.ts'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { ledgerSum, waitFor } from './helpers/ledger.ts'

// Its own PostgreSQL cluster, killed and restarted: run once, in the PostgreSQL pass.
describe.skipIf(!TEST_POSTGRES)('its own PostgreSQL cluster, killed and restarted', () => {
  let postgres: Postgres
  const servers: TestServer[] = []
  beforeAll(async () => {
    postgres = await startPostgres()
  })
  afterAll(async () => {
    for (const server of servers) await server.dispose()
    await postgres.stop()
  })

  async function serverOnOwnDatabase(env: Record<string, string> = {}): Promise<TestServer> {
    const server = await startTestServer({ TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl), ...env })
    servers.push(server)
    return server
  }

  interface Answer {
    status: number
    retryAfter: string | null
    code: string | undefined
    at: number
  }

  /** A request's status, its Retry-After and its error code, whatever happens (a refused connection is status 0). */
  async function answerOf(request: Promise<Response>): Promise<Answer> {
    try {
      const response = await request
      const text = await response.text()
      let code: string | undefined
      try {
        code = JSON.parse(text).code
      } catch {}
      return { status: response.status, retryAfter: response.headers.get('retry-after'), code, at: performance.now() }
    } catch {
      return { status: 0, retryAfter: null, code: undefined, at: performance.now() }
    }
  }

  /** A signed entry creation in two requests (the nonce, then the entry), as a client does it; both answers. */
  async function createSigned(
    url: string,
    wallet: Wallet,
    feedId: string,
    text: string,
  ): Promise<{ nonce: Answer; entry?: Answer; id?: string }> {
    const nonceReply = await fetch(`${url}/v1/auth/nonce`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet_address: wallet.address }),
    }).catch(() => null)
    if (nonceReply?.status !== 200)
      return { nonce: await answerOf(nonceReply ? Promise.resolve(nonceReply) : Promise.reject(new Error('refused'))) }
    const { message } = (await nonceReply.json()) as { message: string }
    const headers = {
      'content-type': 'application/json',
      'x-wallet-address': wallet.address,
      'x-signature': await wallet.signMessage({ message }),
      'x-message': message,
      'x-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-chain-id': '84532',
    }
    const response = await fetch(`${url}/v1/feeds/${feedId}/entries`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ content_base64: b64(text), mime_type: 'text/plain' }),
    }).catch(() => null)
    const body = response?.status === 201 ? ((await response.clone().json()) as { id: string }) : null
    const entry = await answerOf(response ? Promise.resolve(response) : Promise.reject(new Error('refused')))
    return { nonce: { status: 200, retryAfter: null, code: undefined, at: entry.at }, entry, id: body?.id }
  }

  describe('PostgreSQL restarted under load', () => {
    test('requests in flight answer 503 with a Retry-After, nothing is half-written, the server serves again by itself', async () => {
      const server = await serverOnOwnDatabase({ TRELLIS_LOG: 'warn' }) // the outage's lines, not every request's
      const owner = newWallet()
      // A feed per writer: together they write more than one feed's 1000 entries in the test's few seconds.
      const feeds = [
        await createFeed(server.url, owner, { name: 'under load 1' }),
        await createFeed(server.url, owner, { name: 'under load 2' }),
        await createFeed(server.url, owner, { name: 'under load 3' }),
      ]
      const feed = feeds[0]
      const texts = new Map<string, { feedId: string; text: string }>()
      const answers: Answer[] = []
      const writes: { entry?: Answer }[] = []
      let running = true
      let n = 0
      const writer = async (feedId: string) => {
        while (running) {
          const text = `entry ${n++} ${crypto.randomUUID()}`
          const result = await createSigned(server.url, owner, feedId, text)
          answers.push(result.nonce)
          if (result.entry) answers.push(result.entry), writes.push(result)
          if (result.id) texts.set(result.id, { feedId, text })
        }
      }
      // Reads the memo cannot answer: each asks a page size not asked before.
      const reader = async (offset: number) => {
        for (let i = 0; running; i++)
          answers.push(
            await answerOf(
              fetch(
                `${server.url}/v1/feeds/${feed.id}/entries?page_size=${1 + ((offset + i * 7) % 100)}&sort=${i % 2 ? 'newest' : 'oldest'}`,
              ),
            ),
          )
      }
      const load = [...feeds.map((f) => writer(f.id)), reader(0), reader(3), reader(5)]
      await Bun.sleep(800)
      const halted = performance.now()
      postgres.halt()
      await Bun.sleep(1500)
      postgres.resume()
      const resumed = performance.now()
      await Bun.sleep(2500)
      running = false
      await Promise.all(load)

      const during = answers.filter((a) => a.at >= halted && a.at <= resumed)
      const unavailable = answers.filter((a) => a.status === 503)
      // The outage was felt, and felt only as 503s with a Retry-After and their code.
      expect(during.length).toBeGreaterThan(0)
      expect(unavailable.length).toBeGreaterThan(0)
      for (const a of unavailable) expect([a.code, a.retryAfter]).toEqual(['SERVICE_UNAVAILABLE', '5'])
      expect(answers.filter((a) => ![200, 201, 503].includes(a.status))).toEqual([])
      // Back without a restart: every answer in the last second after the database came back is a success.
      const settled = answers.filter((a) => a.at > resumed + 1500)
      expect(settled.length).toBeGreaterThan(10)
      expect(settled.filter((a) => a.status >= 300)).toEqual([])

      // Nothing half-written: every entry answered 201 is there whole; the feed's tally counts what is there; an entry
      // answered 503 either is there whole or not at all (its commit may have landed as its connection was cut).
      const all: { id: string }[] = []
      for (const { id: feedId } of feeds) {
        const listed = (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries?page_size=100&sort=oldest`)).body
        const ofFeed: { id: string }[] = [...listed.data]
        for (let token = listed.pagination?.next_page_token; token; ) {
          const page = (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries?page_size=100&sort=oldest&page_token=${token}`)).body
          ofFeed.push(...page.data)
          token = page.pagination?.next_page_token
        }
        expect((await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body.total_entries).toBe(ofFeed.length)
        all.push(...ofFeed)
      }
      const created = writes.filter((w) => w.entry!.status === 201).length
      const refused = writes.filter((w) => w.entry!.status === 503).length
      expect(all.length).toBeGreaterThanOrEqual(created)
      expect(all.length).toBeLessThanOrEqual(created + refused)
      for (const [id, { feedId, text }] of texts)
        expect(await (await fetch(`${server.url}/v1/feeds/${feedId}/entries/${id}/content`)).text()).toBe(text)
      const verified = await trellis(['verify'], server.dataDir, server.recordsEnv)
      expect(verified.json).toMatchObject({ ok: true })
      expect(server.logs.filter((line) => line.includes('unhandled error'))).toEqual([])
      // The outage is told, a line a second at most, counting what it cost.
      const told = server.logs.filter((line) => line.includes('answered 503: a store cannot be reached')).map((line) => JSON.parse(line))
      expect(told.length).toBeGreaterThan(0)
      expect(told.length).toBeLessThanOrEqual(4)
      expect(told.reduce((sum, line) => sum + line.answered_503, 0)).toBeLessThanOrEqual(unavailable.length)
    })
  })

  describe('a purchase whose recording transaction is killed', () => {
    let chain: TestChain
    afterAll(async () => {
      await chain?.stop()
    })

    test('answers 503 pending; the payment stays pending; the reconciler records it by the chain, once', async () => {
      chain = await startChain()
      const server = await serverOnOwnDatabase({ ...chain.env, TRELLIS_RECONCILE_S: '3600' })
      const owner = newWallet()
      const price = 25_000n
      const feed = await createFeed(server.url, owner)
      const entry = await createEntry(server.url, owner, feed.id, {
        content_base64: b64('paid words'),
        is_free: false,
        price: { amount: String(price) },
      })
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: price }))

      // The ledger table is locked, so the recording transaction waits at its INSERT once the transfer is on chain;
      // there it is killed, as a crashed or failed-over backend would be.
      const admin = new SQL(server.recordsEnv.TRELLIS_DATABASE_URL!, { max: 2 })
      const lock = await admin.reserve()
      await lock.unsafe('BEGIN')
      await lock.unsafe('LOCK TABLE transactions IN SHARE ROW EXCLUSIVE MODE')
      const reply = answerOf(fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, { headers: { 'x-payment': header } }))
      let killed = false
      await waitFor(
        'the recording transaction waiting on the ledger',
        async () => {
          const [row] = await admin.unsafe(
            `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO transactions%'`,
          )
          if (row) killed = (await admin.unsafe('SELECT pg_terminate_backend($1) AS done', [row.pid]))[0].done
          return killed
        },
        30_000,
      )
      await lock.unsafe('COMMIT')
      lock.release()

      const answer = await reply
      expect([answer.status, answer.code, answer.retryAfter !== null]).toEqual([503, 'PAYMENT_PENDING', true])
      expect(await chain.balanceOf(buyer.address)).toBe(1_000_000n - price) // the chain has it
      const pending = await withRecords(server, (db) => db.all<{ status: string }>('SELECT status FROM payments'))
      expect(pending.map((p) => p.status)).toEqual(['pending'])
      expect(await ledgerSum(server.url, 'asset=USDC')).toBe(0n)

      await server.restart() // the reconciler runs at start
      await waitFor(
        'the payment decided',
        async () => (await withRecords(server, (db) => db.all<{ status: string }>('SELECT status FROM payments')))[0]!.status !== 'pending',
      )
      const decided = await withRecords(server, (db) => db.all<{ status: string }>('SELECT status FROM payments'))
      expect(decided.map((p) => p.status)).toEqual(['settled'])
      expect(await ledgerSum(server.url, 'asset=USDC')).toBe(price)
      expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body).toMatchObject({
        total_purchases: 1,
        total_revenue: String(price),
      })
      expect((await call(server.url, 'GET', `/v1/wallets/address/${owner.address}`)).body).toMatchObject({ total_revenue: String(price) })
      await admin.close()
    }, 90_000)
  })

  describe('PostgreSQL crashed', () => {
    test('signatures made before the crash are refused after it, used or not (the nonces are gone, never ' +
      'reusable); every record and its blocks stay', async () => {
      const databaseUrl = await emptyDatabase(postgres.adminUrl)
      const server = await serverOnOwnDatabase({ TRELLIS_DATABASE_URL: databaseUrl, TRELLIS_LOG: 'error' })
      const owner = newWallet()
      const feed = await createFeed(server.url, owner, { name: 'before the crash' })
      const used = await authHeaders(server.url, owner)
      const entry = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
        body: { content_base64: b64('kept'), mime_type: 'text/plain' },
        headers: used,
      })
      expect(entry.status).toBe(201)
      const unused = await authHeaders(server.url, owner)

      postgres.crash()
      postgres.resume() // crash recovery: UNLOGGED tables come back empty
      await waitFor('the server serving again', async () => (await fetch(`${server.url}/v1/feeds/${feed.id}`)).status === 200, 30_000)

      for (const headers of [used, unused]) {
        const replay = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
          body: { content_base64: b64('again'), mime_type: 'text/plain' },
          headers,
        })
        expectError(replay, 401, 'INVALID_NONCE')
      }
      const listed = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries`)
      expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([entry.body.id])
      // Block puts do not wait for their own flush: the entry's commit, after them in the WAL, made them durable.
      // Asked of the table itself, as the server may answer from its caches.
      const sql = new SQL(databaseUrl)
      const [{ kept }] = await sql`SELECT COUNT(*)::int AS kept FROM blocks WHERE mh = ${CID.parse(entry.body.cid).multihash.bytes}`
      await sql.close()
      expect(kept).toBe(1)
      expect(await (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.body.id}/content`)).text()).toBe('kept')
      expect((await createEntry(server.url, owner, feed.id, { content_base64: b64('after') })).id).toBeString()
    }, 90_000)
  })

  describe('connections', () => {
    test(
      "records and content share one pool: TRELLIS_DB_POOL bounds the server's connections (its " +
        'change feed, its leader lease and its long-reads threads open theirs, named apart)',
      async () => {
        const pool = 2
        const url = await emptyDatabase(postgres.adminUrl)
        const server = await startTestServer({
          TRELLIS_DATABASE_URL: url,
          TRELLIS_DB_POOL: String(pool),
          TRELLIS_LOG: 'error',
          TRELLIS_RATE_LIMIT: 'off',
        })
        servers.push(server)
        const database = new URL(url).pathname.slice(1)
        const admin = new SQL(postgres.adminUrl, { max: 1 })
        const owner = newWallet()
        const feed = await createFeed(server.url, owner, { name: 'budget' })
        const stored = await createEntry(server.url, owner, feed.id, { content_base64: b64('x'.repeat(300_000)) }) // two blocks and a root
        let most = 0
        let watching = true
        const watcher = (async () => {
          while (watching) {
            const [{ n }] = await admin.unsafe(
              `SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client ` +
                `backend' AND application_name NOT IN ('trellis long reads', 'trellis changes', 'trellis ` +
                `leases')`,
              [database],
            )
            most = Math.max(most, n)
            await Bun.sleep(5)
          }
        })()
        await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            if (i % 3 === 0) expect((await createEntry(server.url, owner, feed.id, { content_base64: b64(`entry ${i}`) })).id).toBeString()
            else if (i % 3 === 1) expect((await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${stored.id}/content`)).status).toBe(200)
            else expect((await fetch(`${server.url}/v1/feeds?limit=5&i=${i}`)).status).toBe(200)
          }),
        )
        watching = false
        await watcher
        const [{ listeners, changes, leases }] = await admin.unsafe(
          `SELECT COUNT(*) FILTER (WHERE application_name = 'trellis changes' AND query LIKE ` +
            `'LISTEN%')::int AS listeners,
      COUNT(*) FILTER (WHERE application_name = 'trellis changes')::int AS changes, COUNT(*) ` +
            `FILTER (WHERE application_name = 'trellis leases')::int AS leases
      FROM pg_stat_activity WHERE datname = $1`,
          [database],
        )
        await admin.close()
        // The pool is used to the full, and no further (two pools, records' and content's, would show twice as many).
        expect(most).toBe(pool)
        expect(listeners).toBe(1)
        expect(changes).toBeLessThanOrEqual(2) // the listening connection, and the heartbeat's
        expect(leases).toBe(1) // it leads: the leader's lease
      },
    )

    test('a pool of one connection serves writes and reads while the server leads (the lease has a connection of its own)', async () => {
      const server = await startTestServer({
        TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl),
        TRELLIS_DB_POOL: '1',
        TRELLIS_LOG: 'error',
      })
      servers.push(server)
      expect((await (await fetch(`${server.url}/health`)).json()).leader).toBe(true)
      const owner = newWallet()
      const feed = await createFeed(server.url, owner, { name: 'one connection' })
      const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('served') })
      expect(await (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`)).text()).toBe('served')
    })
  })
})
