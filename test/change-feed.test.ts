// Two servers on one PostgreSQL database: a write on one shows in the other's cached reads within the notification
// delay, and still does while the other's listening connection is killed and re-made (its memo keeps nothing while
// it cannot hear, and forgets what it read once it hears again). A data command's write counts as another instance's.
// PostgreSQL only, on a cluster of its own: run once, in the PostgreSQL pass.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { emptyDatabase, TEST_POSTGRES } from '../dev/test-database.ts'
import { b64, call, createEntry, createFeed, newWallet, authHeaders, type Wallet } from '../dev/api.ts'

let postgres: Postgres
let a: TestServer
let b: TestServer
let admin: SQL
let owner: Wallet
let feedId: string

beforeAll(async () => {
  if (!TEST_POSTGRES) return
  postgres = await startPostgres()
  admin = new SQL(postgres.adminUrl, { max: 1 })
  const url = await emptyDatabase(postgres.adminUrl)
  a = await startTestServer({ TRELLIS_DATABASE_URL: url, TRELLIS_LOG: 'warn' })
  b = await startTestServer({ TRELLIS_DATABASE_URL: url, TRELLIS_LOG: 'warn' })
  owner = newWallet()
  feedId = (await createFeed(a.url, owner, { name: 'first' })).id
})
afterAll(async () => {
  for (const server of [a, b]) await server?.dispose()
  await admin?.close()
  await postgres?.stop()
})

const nameOn = async (server: TestServer) => (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).body.name as string

async function rename(name: string) {
  const patched = await call(a.url, 'PATCH', `/v1/feeds/${feedId}`, { body: { name }, headers: await authHeaders(a.url, owner) })
  expect(patched.status).toBe(200)
}

/** Milliseconds from now until B answers `name`, polled every 5 ms; fails after `limitMs`. */
async function msUntilBSays(name: string, limitMs: number): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    if ((await nameOn(b)) === name) return performance.now() - started
    await Bun.sleep(5)
  }
  throw new Error(`B still answered "${await nameOn(b)}" ${limitMs} ms after A wrote "${name}"`)
}

describe.skipIf(!TEST_POSTGRES)('instances on one database', () => {
  test("a write on A shows in B's cached read within 250 ms", async () => {
    for (let i = 0; i < 3; i++) expect(await nameOn(b)).toBe('first') // read, and kept in B's memo
    await rename('second')
    expect(await msUntilBSays('second', 1_000)).toBeLessThan(250)
    expect(await nameOn(a)).toBe('second') // A: read-your-writes
  })

  test("B's listening connection killed: B's reads stay fresh, and its feed resumes by itself", async () => {
    expect(await nameOn(b)).toBe('second')
    const database = new URL(a.recordsEnv.TRELLIS_DATABASE_URL!).pathname.slice(1)
    const killed = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database} AND query LIKE 'LISTEN%'`
    expect(killed.length).toBeGreaterThanOrEqual(2) // A's and B's listeners
    await rename('while deaf')
    // Heard late at worst: B re-listens (and forgets what it read then), or stops keeping reads after 1.5 s unheard.
    expect(await msUntilBSays('while deaf', 3_000)).toBeLessThan(1_750)
    await Bun.sleep(2_000) // listening again by now
    for (let i = 0; i < 3; i++) expect(await nameOn(b)).toBe('while deaf')
    await rename('heard again')
    expect(await msUntilBSays('heard again', 1_000)).toBeLessThan(250)
  })

  test("a write by another client of the database (a data command, psql) counts as another instance's", async () => {
    expect(await nameOn(b)).toBe('heard again')
    const database = new SQL(a.recordsEnv.TRELLIS_DATABASE_URL!, { max: 1 })
    await database`UPDATE feeds SET name = 'by hand' WHERE id = ${feedId}`
    await database.close()
    expect(await msUntilBSays('by hand', 1_000)).toBeLessThan(250)
    expect(await nameOn(a)).toBe('by hand')
  })

  test('a job with nothing to do tells no instance of a change; one that frees an entry does', async () => {
    // Every instance drops every kept read on a change: the expiry jobs, finding nothing every 30 s, emptied them all.
    const url = await emptyDatabase(postgres.adminUrl)
    const clocked = await startTestServer({ TRELLIS_DATABASE_URL: url, TRELLIS_LOG: 'warn', TRELLIS_TEST_CLOCK_FILE: testClockFile() })
    const listener = new SQL(url, { max: 1 })
    try {
      const heard: string[] = []
      await listener.listen('trellis_changes', (payload) => void (payload.startsWith('hb:') || heard.push(payload)))
      const feed = await createFeed(clocked.url, owner, { name: 'early access' })
      const entry = await createEntry(clocked.url, owner, feed.id, {
        content_base64: b64('free in an hour'),
        is_free: false,
        price: { amount: '10000', currency: 'USDC' },
        expires_at: Math.floor(Date.now() / 1000) + 3_600,
      })
      await Bun.sleep(300)
      heard.length = 0
      await clocked.moveClock(60) // the deadline jobs run: nothing is due
      await Bun.sleep(300)
      expect(heard).toEqual([])
      await clocked.moveClock(7_200) // the entry's early access has ended
      const freed = async () => (await call(clocked.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)).body.is_free
      for (let i = 0; i < 100 && !(await freed()); i++) await Bun.sleep(50)
      expect(await freed()).toBe(true)
      // A read answers "free" by its clock as soon as the hour is past; the job's commit (and its notice) may follow.
      for (let i = 0; i < 100 && heard.length === 0; i++) await Bun.sleep(10)
      expect(heard.length).toBeGreaterThan(0)
    } finally {
      await listener.close()
      await clocked.dispose()
    }
  })
})
