// Read-your-writes across instances (issue 41, item 2): a write's answer names the database's version after it
// (header Trellis-Version, cookie trellis_version); an instance asked for a version it has not heard of through its
// change feed waits for it (up to 250 ms), then reads fresh. Three real servers on one PostgreSQL database, over HTTP:
// a write through A read at once through B or C, 300 times, is never stale with the version echoed (and how often it
// is without, printed); the cookie does the same for a plain fetch; a version from the future or garbage costs no
// error. The parts (the version's wait, the memo's bypass, the header and cookie) are checked on their own, on both
// engines; the embedded engine names no version.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { emptyDatabase, recordsEnvFor, TEST_POSTGRES } from '../dev/test-database.ts'
import { authHeaders, call, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { carriedVersion, VERSION_COOKIE } from '../src/edge/read-your-writes.ts'
import { feedPositions, PROBE_AFTER_MS, positionOf } from '../src/store/postgres/positions.ts'
import { readMemo } from '../src/store/memo.ts'
import { mustReadFresh, readingAs, readVersion } from '../src/lib/fresh-reads.ts'

const VERSION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/

describe('the parts', () => {
  test('a version is read from the header, else the cookie (its slash encoded or not); anything else is none', () => {
    const of = (headers: Record<string, string>) => carriedVersion(new Headers(headers))
    expect(of({ 'trellis-version': '16/B374D848' })).toBe('16/B374D848')
    expect(of({ cookie: `a=b; ${VERSION_COOKIE}=0%2F1A2B; c=d` })).toBe('0/1A2B')
    expect(of({ cookie: `${VERSION_COOKIE}=0/1A2B`, 'trellis-version': '0/FF' })).toBe('0/FF')
    expect(of({ cookie: `not_${VERSION_COOKIE}=0/1` })).toBeNull()
    expect(of({ 'trellis-version': 'x'.repeat(1_000) })).toBeNull()
    expect(of({})).toBeNull()
    expect(positionOf('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n)
    for (const garbage of ['', 'hello', '1/2/3', '-1/0', '123456789/0', '0/0x1']) expect(positionOf(garbage)).toBeNull()
  })

  test('a request that must read fresh gets nothing the memo holds, and what it reads is neither kept nor shared', async () => {
    const memo = readMemo({ version: () => 1, live: () => true }, 10_000)
    memo('k', () => 'old')
    expect(memo.peek('k')).toBe('old')
    const fresh = { version: '0/10', fresh: true, wrote: false }
    const inside = await readingAs(fresh, async () => {
      expect(mustReadFresh()).toBe(true)
      expect(readVersion()).toBe('0/10')
      expect(memo.peek('k')).toBeUndefined()
      expect(memo('k', () => 'new')).toBe('new')
      await Bun.sleep(1)
      return memo.get('k', async () => 'newer')
    })
    expect(inside).toBe('newer')
    expect([mustReadFresh(), readVersion(), memo.peek('k')]).toEqual([false, null, 'old'])
    // A version heard: the memo serves as ever.
    readingAs({ version: '0/10', fresh: false, wrote: false }, () => expect(memo.peek('k')).toBe('old'))
  })

  test("an instance's wait for a version: heard at once, heard later, never written (ignored), or not heard in time", async () => {
    let database = '0/500'
    let tell: (position: string) => void = () => {}
    let live = true
    const sql = { unsafe: async () => [{ position: database }] }
    const feed = { hearPositions: (listener: typeof tell) => ((tell = listener), () => {}), changes: { live: () => live } }
    const positions = feedPositions(sql as never, feed as never)
    tell('0/100')
    expect(positions.reach('0/80', 250)).toBe('heard') // at once: no promise, no timer
    expect(positions.reach('0/100', 250)).toBe('heard')
    expect(positions.reach('garbage', 250)).toBe('ignored')
    const later = positions.reach('0/200', 250)
    expect(later).toBeInstanceOf(Promise)
    setTimeout(() => tell('0/250'), 3)
    expect(await later).toBe('heard')
    let started = performance.now()
    expect(await positions.reach('1/0', 250)).toBe('ignored') // past the position read after it came: never written
    expect(performance.now() - started).toBeLessThan(PROBE_AFTER_MS + 100)
    started = performance.now()
    expect(await positions.reach('0/400', 60)).toBe('behind') // written, never heard: fresh after the wait
    expect(performance.now() - started).toBeGreaterThanOrEqual(55)
    database = '0/900'
    live = false
    expect(positions.reach('0/800', 250)).toBe('behind') // deaf: nothing is kept anyway, so no wait
    expect(await positions.version()).toBe('0/900')
  })
})

describe('the embedded engine', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_LOG: 'warn' }, { embedded: true })
  })
  afterAll(() => server?.dispose())

  test('names no version (one process reads its own writes), and a version sent to it changes nothing', async () => {
    const owner = newWallet()
    const created = await call(server.url, 'POST', '/v1/feeds', { wallet: owner, body: { name: 'embedded' } })
    expect(created.status).toBe(201)
    expect(created.headers.get('trellis-version')).toBeNull()
    expect(created.headers.getSetCookie()).toEqual([])
    for (const version of ['0/1', 'FFFFFFFF/FFFFFFFF', 'garbage']) {
      const read = await call(server.url, 'GET', `/v1/feeds/${created.body.id}`, { headers: { 'trellis-version': version } })
      expect([read.status, read.body.name]).toEqual([200, 'embedded'])
    }
  })
})

if (!TEST_POSTGRES) console.log('read-your-writes.test.ts: the cluster part is skipped: instances share a PostgreSQL database')

describe.skipIf(!TEST_POSTGRES)('three instances on one database', () => {
  let databaseUrl: string
  const instances: TestServer[] = []
  let owner: Wallet
  let feed: { id: string }
  const [a, b, c] = [0, 1, 2].map((i) => () => instances[i]!.url)

  beforeAll(async () => {
    databaseUrl = await emptyDatabase(TEST_POSTGRES!)
    const env = { ...recordsEnvFor(databaseUrl), TRELLIS_LOG: 'warn' }
    for (let i = 0; i < 3; i++) instances.push(await startTestServer(env))
    owner = newWallet()
    feed = await createFeed(a(), owner, { name: 'name 0' })
  })
  afterAll(async () => {
    for (const server of instances) await server.dispose()
    if (databaseUrl) {
      const admin = new SQL(TEST_POSTGRES!, { max: 1 })
      await admin.unsafe(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`)
      await admin.close()
    }
  })

  let named = 0
  /** Renames the feed through `url` (a plain fetch, signed): its answer. */
  async function rename(url: string): Promise<{ name: string; response: Response }> {
    const name = `name ${++named}`
    const headers = { ...(await authHeaders(url, owner)), 'content-type': 'application/json' }
    const response = await fetch(`${url}/v1/feeds/${feed.id}`, { method: 'PATCH', headers, body: JSON.stringify({ name }) })
    expect(response.status).toBe(200)
    await response.arrayBuffer()
    return { name, response }
  }
  /** GET /v1/feeds/{id} through `url`: the name it answers and the milliseconds it took. */
  async function nameOn(url: string, headers: Record<string, string> = {}): Promise<{ name: string; ms: number }> {
    const started = performance.now()
    const response = await fetch(`${url}/v1/feeds/${feed.id}`, { headers })
    const body = (await response.json()) as { name: string }
    const ms = performance.now() - started
    expect(response.status).toBe(200)
    return { name: body.name, ms }
  }
  const summary = (ms: number[]) => {
    const sorted = [...ms].sort((x, y) => x - y)
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2)
    return `mean ${(ms.reduce((s, x) => s + x, 0) / ms.length).toFixed(2)} ms, p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`
  }

  test("a write's answer names the version after it, in a header and an HttpOnly SameSite=Lax cookie", async () => {
    const { response } = await rename(a())
    const version = response.headers.get('trellis-version')!
    expect(version).toMatch(VERSION)
    expect(response.headers.getSetCookie()).toEqual([`${VERSION_COOKIE}=${version}; Path=/; Max-Age=10; HttpOnly; SameSite=Lax`])
    expect(response.headers.get('access-control-expose-headers')).toContain('Trellis-Version')
    // A later write, a later version; a read, or a write that commits nothing kept (a nonce), names none.
    const next = (await rename(b())).response.headers.get('trellis-version')!
    expect(positionOf(next)! > positionOf(version)!).toBe(true)
    const read = await fetch(`${a()}/v1/feeds/${feed.id}`)
    expect([read.headers.get('trellis-version'), read.headers.getSetCookie()]).toEqual([null, []])
    await read.arrayBuffer()
    const nonce = await call(a(), 'POST', '/v1/auth/nonce', { body: { wallet_address: owner.address } })
    expect([nonce.status, nonce.headers.get('trellis-version')]).toEqual([200, null])
  })

  test('written through A, read at once through B or C 300 times: never stale with the version echoed; without it, ' +
    'how often (printed); the added latency on the writer and on another instance', async () => {
    const rounds = 300
    const stale = { echoed: 0, plain: 0 }
    const ms: Record<'plain B' | 'echoed B' | 'plain A' | 'echoed A', number[]> = {
      'plain B': [],
      'echoed B': [],
      'plain A': [],
      'echoed A': [],
    }
    for (let i = 0; i < rounds; i++) {
      const other = i % 2 === 0 ? b() : c()
      for (const echo of [false, true]) {
        await nameOn(other) // kept in its memo
        const { name, response } = await rename(a())
        const headers: Record<string, string> = echo ? { 'trellis-version': response.headers.get('trellis-version')! } : {}
        const read = await nameOn(other, headers)
        if (read.name !== name) stale[echo ? 'echoed' : 'plain']++
        ms[echo ? 'echoed B' : 'plain B'].push(read.ms)
        // On the writer, which reads its own writes with or without the version.
        const own = await rename(a())
        const ownRead = await nameOn(a(), echo ? { 'trellis-version': own.response.headers.get('trellis-version')! } : {})
        expect(ownRead.name).toBe(own.name)
        ms[echo ? 'echoed A' : 'plain A'].push(ownRead.ms)
      }
    }
    console.log(
      `read-your-writes: ${rounds} reads through another instance right after a write through A: ` +
        `stale without the version ${stale.plain} (${((100 * stale.plain) / rounds).toFixed(1)} %), with it ${stale.echoed}`,
    )
    for (const [what, list] of Object.entries(ms)) console.log(`read-your-writes: read ${what}: ${summary(list)}`)
    // What a write's answer pays for its version: the statement that reads and tells it, alone.
    const database = new SQL(databaseUrl, { max: 1 })
    const positions = feedPositions(database, null)
    const told: number[] = []
    for (let i = 0; i < rounds; i++) {
      const started = performance.now()
      expect(await positions.version()).toMatch(VERSION)
      told.push(performance.now() - started)
    }
    await database.close()
    console.log(`read-your-writes: the version statement: ${summary(told)}`)
    const metrics = await (await fetch(`${b()}/metrics`)).text()
    console.log(
      `read-your-writes: B's ${metrics
        .split('\n')
        .filter((line) => line.startsWith('trellis_read_version'))
        .join(', ')}`,
    )
    expect(stale.echoed).toBe(0)
    expect(metrics).toMatch(/^trellis_read_versions_total\{outcome="heard"\} [1-9]/m)
  }, 120_000)

  test('the cookie does the same for a plain fetch that carries it back (among other cookies): 100 times, never stale', async () => {
    let stale = 0
    for (let i = 0; i < 100; i++) {
      const other = i % 2 === 0 ? b() : c()
      await nameOn(other)
      const { name, response } = await rename(a())
      const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!
      expect(cookie).toStartWith(`${VERSION_COOKIE}=`)
      if ((await nameOn(other, { cookie: `trellis_wallet=${owner.address}; ${cookie}` })).name !== name) stale++
    }
    expect(stale).toBe(0)
  })

  test("a feed re-activated on A is listed on B at once when the version is echoed (B's kept list page is not served)", async () => {
    const listed = async (url: string, version: string) => {
      const reply = await call(url, 'GET', `/v1/feeds?owner_wallet_address=${owner.address}`, { headers: { 'trellis-version': version } })
      return (reply.body.data as Array<{ id: string }>).some((f) => f.id === feed.id)
    }
    for (let i = 0; i < 30; i++) {
      const other = i % 2 === 0 ? b() : c()
      expect(await listed(other, '0/0')).toBe(true) // kept in its memo
      const removed = await call(a(), 'DELETE', `/v1/feeds/${feed.id}`, { wallet: owner })
      expect(removed.status).toBeLessThan(300)
      expect(await listed(other, removed.headers.get('trellis-version')!)).toBe(false)
      const back = await call(a(), 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { is_active: true } })
      expect(back.status).toBe(200)
      expect(await listed(other, back.headers.get('trellis-version')!)).toBe(true)
    }
  })

  test('a version from the future or garbage is no error: answered at once (ignored) with what the instance holds', async () => {
    const { name } = await rename(a())
    await Bun.sleep(50) // heard everywhere
    for (const version of ['FFFFFFFF/FFFFFFFF', '0/0', 'garbage', '1/2/3', '%%%', 'x'.repeat(5_000)]) {
      const read = await nameOn(b(), { 'trellis-version': version })
      expect(read.name).toBe(name)
      expect(read.ms).toBeLessThan(200)
      const cookie = await nameOn(c(), { cookie: `${VERSION_COOKIE}=${version}` })
      expect(cookie.name).toBe(name)
    }
    expect(await (await fetch(`${b()}/metrics`)).text()).toMatch(/^trellis_read_versions_total\{outcome="ignored"\} [1-9]/m)
  })

  test('a browser session signed out on A is refused at once by B when the version is echoed: 20 times', async () => {
    for (let i = 0; i < 20; i++) {
      const opened = await call(a(), 'POST', '/v1/auth/session', { wallet: owner })
      const session = opened.headers.getSetCookie()[0]!.split(';')[0]!
      expect(opened.headers.get('trellis-version')).toBeNull() // opening one writes nothing
      const other = i % 2 === 0 ? b() : c()
      expect((await call(other, 'GET', '/v1/auth/session', { headers: { cookie: session } })).status).toBe(200) // known there
      const closed = await call(a(), 'DELETE', '/v1/auth/session', { headers: { cookie: session } })
      expect(closed.status).toBe(204)
      const version = closed.headers.get('trellis-version')!
      expect(version).toMatch(VERSION)
      expect(closed.headers.getSetCookie().at(-1)).toStartWith(`${VERSION_COOKIE}=`)
      const after = await call(other, 'GET', '/v1/auth/session', { headers: { cookie: `${session}; ${VERSION_COOKIE}=${version}` } })
      expect(after.status).toBe(401)
    }
  })

  test("B's listening connection killed (its memo stale until it hears again): a read with the version is fresh", async () => {
    const database = new SQL(databaseUrl, { max: 1 })
    try {
      for (let i = 0; i < 5; i++) {
        await nameOn(b())
        await database`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'trellis changes' AND query LIKE 'LISTEN%'`
        const { name, response } = await rename(a())
        const read = await nameOn(b(), { 'trellis-version': response.headers.get('trellis-version')! })
        expect(read.name).toBe(name)
        expect(read.ms).toBeLessThan(400) // the wait is 250 ms at most
        await Bun.sleep(2_000) // listening again
      }
    } finally {
      await database.close()
    }
    console.log(`read-your-writes: B's ${(await (await fetch(`${b()}/metrics`)).text()).match(/^trellis_read_versions_total.*$/gm)}`)
  }, 60_000)
})
