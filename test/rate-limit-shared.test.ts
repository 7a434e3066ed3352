// Rate limits shared by instances on one database (leased tokens): three limiters, sharing nothing but PostgreSQL,
// never admit more than the limit of a window in total; a spent window is refused without a statement; a database
// that cannot lease leaves each instance counting alone. The servers' own test (cluster.test.ts) drives the same
// through a balancer; this one counts statements. PostgreSQL: the suite's cluster, or one of its own.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { emptyDatabase, postgresForTest } from '../dev/test-database.ts'
import { openPostgresRecords } from '../src/store/postgres/open.ts'
import { sharedRateLimiter } from '../src/edge/rate-limit-shared.ts'
import type { Cluster, Records } from '../src/store/records.ts'

let postgres: Awaited<ReturnType<typeof postgresForTest>>
let records: Records<unknown>
let statements = 0
let counting: Pick<Cluster, 'leaseRate'>

beforeAll(async () => {
  postgres = await postgresForTest()
  records = await openPostgresRecords(await emptyDatabase(postgres.adminUrl), 'migrate', 6)
  const cluster = records.cluster!
  counting = { leaseRate: (...args) => (statements++, cluster.leaseRate(...args)) }
})
afterAll(async () => {
  await records?.close()
  await postgres?.stop()
})

const admitted = async (answer: ReturnType<ReturnType<typeof sharedRateLimiter>['check']>) => (await answer).rejected === null

test('150 requests in turn over three instances: exactly 100 admitted, then 429 with Retry-After', async () => {
  const three = [sharedRateLimiter(counting), sharedRateLimiter(counting), sharedRateLimiter(counting)]
  statements = 0
  const answers = []
  for (let i = 0; i < 150; i++) answers.push(await three[i % 3]!.check('GET', '/v1/categories', '198.51.100.1'))
  expect(answers.filter((a) => a.rejected === null).length).toBe(100)
  const last = answers.at(-1)!.rejected!
  expect(last.status).toBe(429)
  expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(10)
  expect(statements).toBeLessThan(60) // a statement per lease, not per request
})

test(
  'a burst of 300 at once over three instances: exactly 100 admitted; a flood after it costs at ' +
    'most one statement per instance, then none',
  async () => {
    const three = [sharedRateLimiter(counting), sharedRateLimiter(counting), sharedRateLimiter(counting)]
    const burst = await Promise.all(
      Array.from({ length: 300 }, (_, i) => admitted(three[i % 3]!.check('GET', '/v1/feeds', '198.51.100.2'))),
    )
    expect(burst.filter(Boolean).length).toBe(100)
    // An instance whose every lease was granted in full has not heard that the window is spent: it asks once to learn
    // it (a fresh-clone CI run saw one such instance). At most one statement per instance, then none at all.
    statements = 0
    for (let i = 0; i < 3_000; i++) expect(await admitted(three[i % 3]!.check('GET', '/v1/feeds', '198.51.100.2'))).toBe(false)
    expect(statements).toBeLessThanOrEqual(3)
    statements = 0
    for (let i = 0; i < 3_000; i++) expect(await admitted(three[i % 3]!.check('GET', '/v1/feeds', '198.51.100.2'))).toBe(false)
    expect(statements).toBe(0)
    // Another client, and another bucket, have windows of their own.
    expect(await admitted(three[0]!.check('GET', '/v1/feeds', '198.51.100.3'))).toBe(true)
    expect(await admitted(three[1]!.check('GET', '/v1/transactions', '198.51.100.2'))).toBe(true)
  },
)

test('RateLimit-Remaining counts what every instance may still lease', async () => {
  const [a, b] = [sharedRateLimiter(counting), sharedRateLimiter(counting)]
  const first = await a.check('POST', '/v1/feeds', '198.51.100.4')
  expect(first.headers['ratelimit-limit']).toBe('100')
  expect(first.headers['ratelimit-remaining']).toBe('99')
  const second = await b.check('POST', '/v1/feeds', '198.51.100.4')
  expect(Number(second.headers['ratelimit-remaining'])).toBeLessThanOrEqual(98)
})

test('when the database cannot lease, each instance counts alone: the limit per instance, and no request waits long', async () => {
  const failing: Pick<Cluster, 'leaseRate'> = {
    leaseRate: async () => {
      throw new Error('connection refused')
    },
  }
  const alone = sharedRateLimiter(failing)
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: 101 }, () => alone.check('GET', '/v1/categories', '198.51.100.5')))
  expect(answers.filter((a) => a.rejected === null).length).toBe(100)
  expect(answers.filter((a) => a.rejected?.status === 429).length).toBe(1)
  expect(performance.now() - started).toBeLessThan(1_000)
})

test('the leader sweeps windows that ended', async () => {
  await records.cluster!.leaseRate('sweep-me', 1, 5, 0.05)
  await Bun.sleep(100)
  expect(await records.cluster!.sweepRateWindows()).toBeGreaterThanOrEqual(1)
  expect(await records.cluster!.sweepRateWindows()).toBe(0)
})
