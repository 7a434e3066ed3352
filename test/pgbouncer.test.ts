// Behind a transaction pooler (issue 41): Debian's PgBouncer in pool_mode=transaction in front of a cluster of this
// test's own. Without TRELLIS_DATABASE_DIRECT_URL a server refuses to start, in one line saying what to set; with it,
// two instances share the database as they do directly: exactly one leads (its advisory lock on a real session), a
// write on one shows in the other's cached read (the change feed's LISTEN on a real session), and records are written
// and read through the pooler (no named prepared statement clashes). PostgreSQL only: run in the PostgreSQL pass.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { startPgBouncer, type Pooler } from '../dev/pgbouncer.ts'
import { emptyDatabase, TEST_POSTGRES } from '../dev/test-database.ts'
import { authHeaders, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { DIRECT_POOLED_REFUSAL, POOLER_REFUSAL } from '../src/store/postgres/pooler.ts'

let postgres: Postgres
let pooler: Pooler
let direct: string
let pooled: string
let a: TestServer
let b: TestServer
let owner: Wallet
let feedId: string

if (!TEST_POSTGRES) console.log('pgbouncer.test.ts: skipped: PostgreSQL only (TRELLIS_TEST_POSTGRES; the PostgreSQL pass runs it)')

beforeAll(async () => {
  if (!TEST_POSTGRES) return
  postgres = await startPostgres()
  pooler = await startPgBouncer(postgres.port)
  direct = await emptyDatabase(postgres.adminUrl)
  pooled = pooler.pooled(direct)
})
afterAll(async () => {
  for (const server of [a, b]) await server?.dispose()
  await pooler?.stop()
  await postgres?.stop()
})

interface Health {
  instance: string
  leader: boolean
}
const health = async (server: TestServer) => (await (await fetch(`${server.url}/health`)).json()) as Health

describe.skipIf(!TEST_POSTGRES)('behind PgBouncer in transaction mode', () => {
  test('without a direct URL the server refuses to start, in one line saying what to set', async () => {
    const started = startTestServer({ TRELLIS_DATABASE_URL: pooled, TRELLIS_LOG: 'warn' })
    await expect(started).rejects.toThrow(`trellis: ${POOLER_REFUSAL}\n`)
    // A data command as well: it would migrate under a session lock the pooler cannot hold.
    const verify = await trellis(['verify'], tempDir(), { TRELLIS_DATABASE_URL: pooled })
    expect(verify.code).not.toBe(0)
    expect(verify.stderr).toBe(`trellis verify: ${POOLER_REFUSAL}\n`)
  })

  test('a "direct" URL through the pooler too is refused, and so is a direct URL alone', async () => {
    const twice = await trellis(['verify'], tempDir(), { TRELLIS_DATABASE_URL: pooled, TRELLIS_DATABASE_DIRECT_URL: pooled })
    expect(twice.stderr).toBe(`trellis verify: ${DIRECT_POOLED_REFUSAL}\n`)
    const alone = await trellis(['verify'], tempDir(), { TRELLIS_DATABASE_DIRECT_URL: direct })
    expect(alone.code).not.toBe(0)
    expect(alone.stderr).toContain('TRELLIS_DATABASE_DIRECT_URL) goes with --database-url')
  })

  test('with one, two instances: exactly one leader, through its own session', async () => {
    const env = { TRELLIS_DATABASE_URL: pooled, TRELLIS_DATABASE_DIRECT_URL: direct, TRELLIS_LEADER_POLL_S: '0.2', TRELLIS_LOG: 'warn' }
    a = await startTestServer(env)
    b = await startTestServer(env)
    let said: Health[] = []
    for (let i = 0; i < 50; i++) {
      said = await Promise.all([a, b].map(health))
      if (said.some((h) => h.leader)) break
      await Bun.sleep(100)
    }
    await Bun.sleep(600) // a few more polls: a second leader would show by now
    said = await Promise.all([a, b].map(health))
    expect(said.filter((h) => h.leader).length).toBe(1)
    expect(said[0]!.instance).not.toBe(said[1]!.instance)
    // The lock is held on a direct connection, named for what it is for.
    const admin = new SQL(postgres.adminUrl, { max: 1 })
    try {
      const [{ n }] = await admin.unsafe(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s USING (pid)
         WHERE l.locktype = 'advisory' AND l.granted AND s.application_name = 'trellis leases'`,
      )
      expect(n).toBeGreaterThanOrEqual(1)
    } finally {
      await admin.close()
    }
  })

  test("records go through the pooler, and a write on A shows in B's cached read", async () => {
    owner = newWallet()
    feedId = (await createFeed(a.url, owner, { name: 'first' })).id
    // Many statements on few pooled sessions, from both instances at once: no prepared statement may clash.
    await Promise.all(Array.from({ length: 6 }, (_, i) => createEntry(i % 2 ? a.url : b.url, owner, feedId, { title: `entry ${i}` })))
    const nameOn = async (server: TestServer) => (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body.name as string
    for (let i = 0; i < 3; i++) expect(await nameOn(b)).toBe('first') // read, and kept in B's memo
    // A's transaction names A in its notice (set in the transaction: the pooler refuses the startup parameter).
    const listener = new SQL(direct, { max: 1 })
    const heard: string[] = []
    await listener.listen('trellis_changes', (payload) => void (payload.startsWith('hb:') || heard.push(payload)))
    const patched = await call(a.url, 'PATCH', `/v1/feeds/${feedId}`, {
      body: { name: 'second' },
      headers: await authHeaders(a.url, owner),
    })
    expect(patched.status).toBe(200)
    const started = performance.now()
    while ((await nameOn(b)) !== 'second' && performance.now() - started < 1_500) await Bun.sleep(5)
    expect(await nameOn(b)).toBe('second')
    expect(performance.now() - started).toBeLessThan(250)
    expect(await nameOn(a)).toBe('second')
    await listener.close()
    expect(heard).toContain((await health(a)).instance)
    const entries = await call(b.url, 'GET', `/v1/feeds/${feedId}/entries`)
    expect(entries.status).toBe(200)
    expect(a.logs.join('\n') + b.logs.join('\n')).not.toContain('prepared statement')
  })
})
