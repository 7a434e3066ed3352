// One leader per database: of the servers on one PostgreSQL database exactly one runs the once-per-database jobs
// (nonce cleanup, entry expiry, reconciliation, the ledger check, leaderboards and ranks), /health says which; when it
// dies another takes over within the poll and runs them at once. The others serve the leaderboards the leader
// publishes, byte for byte. An embedded server always leads. PostgreSQL: a cluster of its own, so both passes of the
// suite run it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { TEST_POSTGRES, emptyDatabase } from '../dev/test-database.ts'
import { createEntry, createFeed, newWallet } from '../dev/api.ts'

// Servers leading on a PostgreSQL cluster of their own: run once, in the PostgreSQL pass.
describe.skipIf(!TEST_POSTGRES)('servers leading on a PostgreSQL cluster of their own', () => {
  interface Health {
    instance: string
    leader: boolean
    jobs: Record<string, { last_run: number | null }>
  }
  const health = async (server: TestServer): Promise<Health> => (await fetch(`${server.url}/health`)).json() as Promise<Health>

  const ONCE_PER_DATABASE = ['nonce-cleanup', 'entry-expiry', 'payment-reconciliation', 'ledger-check', 'stats', 'rankings']
  /** The ones a server waits for before it serves (the others may still be on their first run). */
  const BEFORE_SERVING = ['nonce-cleanup', 'entry-expiry']

  let postgres: Postgres
  const servers: TestServer[] = []
  const start = async (env: Record<string, string>, options: { embedded?: boolean } = {}) => {
    const server = await startTestServer({ TRELLIS_LOG: 'warn', ...env }, options)
    servers.push(server)
    return server
  }

  beforeAll(async () => {
    postgres = await startPostgres()
  })
  afterAll(async () => {
    for (const server of servers) await server.dispose()
    await postgres?.stop()
  })

  test('an embedded server leads, and names its instance', async () => {
    const server = await start({}, { embedded: true })
    const said = await health(server)
    expect(said.leader).toBe(true)
    expect(said.instance).toMatch(/^[0-9a-f-]{36}$/)
    for (const job of BEFORE_SERVING) expect(said.jobs[job]!.last_run).toBeNumber()
  })

  describe('three servers on one database', () => {
    test('exactly one leads and runs the once-per-database jobs; killed, another leads within 2 s and runs them at once', async () => {
      const env = { TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl), TRELLIS_LEADER_POLL_S: '1' }
      const three = [await start(env), await start(env), await start(env)]
      const said = await Promise.all(three.map(health))
      expect(new Set(said.map((h) => h.instance)).size).toBe(3)
      expect(said.filter((h) => h.leader).length).toBe(1)
      // /metrics says the same (trellis_leader, which TrellisLeaderMissing and TrellisLeaderSplit sum per market)
      const leaderGauges = await Promise.all(
        three.map(async (s) => /^trellis_leader (\d)$/m.exec(await (await fetch(`${s.url}/metrics`)).text())![1]),
      )
      expect(leaderGauges).toEqual(said.map((h) => (h.leader ? '1' : '0')))
      for (const h of said.filter((h) => !h.leader)) for (const job of ONCE_PER_DATABASE) expect(h.jobs[job]!.last_run).toBeNull()
      for (const job of BEFORE_SERVING) expect(said.find((h) => h.leader)!.jobs[job]!.last_run).toBeNumber()

      const leader = three[said.findIndex((h) => h.leader)]!
      const others = three.filter((server) => server !== leader)
      await leader.kill()
      const killedAt = performance.now()
      let next: Health | null = null
      while (next === null && performance.now() - killedAt < 5_000) {
        const now = await Promise.all(others.map(health))
        if (now.some((h) => h.leader)) {
          expect(now.filter((h) => h.leader).length).toBe(1)
          next = now.find((h) => h.leader)!
        } else await Bun.sleep(50)
      }
      expect(next).not.toBeNull()
      expect(performance.now() - killedAt).toBeLessThan(2_000)
      // Becoming the leader runs the jobs at once (entry expiry runs on a 30 s period: this is not its timer).
      const successor = others[(await Promise.all(others.map(health))).findIndex((h) => h.leader)]!
      const started = performance.now()
      // Each of them, not only the first to finish: they run side by side.
      const ran = (h: Awaited<ReturnType<typeof health>>) => BEFORE_SERVING.every((job) => h.jobs[job]!.last_run !== null)
      while (!ran(await health(successor)) && performance.now() - started < 5_000) await Bun.sleep(50)
      const after = await health(successor)
      for (const job of BEFORE_SERVING) expect(after.jobs[job]!.last_run).toBeNumber()

      // A graceful stop hands over too.
      await successor.stop()
      const last = others.find((server) => server !== successor)!
      const stoppedAt = performance.now()
      while (!(await health(last)).leader && performance.now() - stoppedAt < 5_000) await Bun.sleep(50)
      expect((await health(last)).leader).toBe(true)
      expect(performance.now() - stoppedAt).toBeLessThan(2_000)
    })

    test("the leader's lease connection killed: it stops leading, and one server leads again", async () => {
      const url = await emptyDatabase(postgres.adminUrl)
      const env = { TRELLIS_DATABASE_URL: url, TRELLIS_LEADER_POLL_S: '1' }
      const two = [await start(env), await start(env)]
      const before = await Promise.all(two.map(health))
      expect(before.filter((h) => h.leader).length).toBe(1)
      const admin = new SQL(postgres.adminUrl, { max: 1 })
      const database = new URL(url).pathname.slice(1)
      const holders = () =>
        admin`SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE d.datname = ${database} AND l.locktype = 'advisory' AND l.granted`
      const [holder] = await holders()
      expect(holder).toBeDefined()
      await admin`SELECT pg_terminate_backend(${holder.pid}::int)`
      // Within the watch (0.5 s) the old leader knows; within a poll (1 s) one of the two holds the lease again.
      await Bun.sleep(2_500)
      const after = await Promise.all(two.map(health))
      expect(after.filter((h) => h.leader).length).toBe(1)
      const [again] = await holders()
      expect(again.pid).not.toBe(holder.pid)
      await admin.close()
    })

    test('the leader publishes the leaderboards; every server serves them byte for byte, from start and on notice', async () => {
      const env = { TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl), TRELLIS_STATS_REFRESH_S: '1' }
      const three = [await start(env), await start(env), await start(env)]
      const said = await Promise.all(three.map(health))
      const follower = three[said.findIndex((h) => !h.leader)]!
      // Written on a follower: the leader's next build has it, and the others hear of the new snapshot.
      const owner = newWallet()
      for (const [name, entries] of [
        ['three entries', 3],
        ['one entry', 1],
      ] as const) {
        const feed = await createFeed(follower.url, owner, { name })
        for (let i = 0; i < entries; i++) await createEntry(follower.url, owner, feed.id, { title: `${name} ${i}` })
      }
      const board = (server: TestServer) => fetch(`${server.url}/v1/leaderboards/top-feeds`).then((r) => r.text())
      const started = performance.now()
      let bodies = await Promise.all(three.map(board))
      while (!(bodies.every((b) => b === bodies[0]) && bodies[0]!.includes('one entry')) && performance.now() - started < 5_000) {
        await Bun.sleep(50)
        bodies = await Promise.all(three.map(board))
      }
      expect(JSON.parse(bodies[0]!).data.map((f: { name: string }) => f.name)).toEqual(['three entries', 'one entry'])
      expect(new Set(bodies).size).toBe(1)
      // Only the leader built them.
      const now = await Promise.all(three.map(health))
      for (const h of now) expect(h.jobs['stats']!.last_run === null).toBe(!h.leader)
      // A server started now serves the published snapshot from its first request.
      const late = await start(env)
      expect((await health(late)).leader).toBe(false)
      const first = await board(late)
      expect(JSON.parse(first).data.length).toBe(2)
      expect([first, ...(await Promise.all(three.map(board)))].every((b) => JSON.parse(b).data.length === 2)).toBe(true)
    })
  })
})
