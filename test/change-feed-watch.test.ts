// A change feed gone deaf is said, not silent (issue 41): a server on PostgreSQL whose listening connection is lost
// and cannot be made again (the database refuses new connections meanwhile) logs one warn line and shows
// trellis_change_feed_heard 0 on /metrics; once it hears again, one line and 1. PostgreSQL only, on a cluster of its
// own: run in the PostgreSQL pass.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { emptyDatabase, TEST_POSTGRES } from '../dev/test-database.ts'

let postgres: Postgres
let server: TestServer
let admin: SQL
let database: string

if (!TEST_POSTGRES) console.log('change-feed-watch.test.ts: skipped: PostgreSQL only (the PostgreSQL pass runs it)')

beforeAll(async () => {
  if (!TEST_POSTGRES) return
  postgres = await startPostgres()
  admin = new SQL(postgres.adminUrl, { max: 1 })
  const url = await emptyDatabase(postgres.adminUrl)
  database = new URL(url).pathname.slice(1)
  server = await startTestServer({ TRELLIS_DATABASE_URL: url, TRELLIS_LOG: 'info' })
})
afterAll(async () => {
  await server?.dispose()
  await admin?.close()
  await postgres?.stop()
})

const heard = async () => /^trellis_change_feed_heard (\d)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]
async function until(what: string, done: () => Promise<boolean>, ms = 10_000) {
  const started = performance.now()
  while (!(await done())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`)
    await Bun.sleep(100)
  }
}
const lines = (start: string) => server.logs.filter((line) => JSON.parse(line).msg?.startsWith(start))

describe.skipIf(!TEST_POSTGRES)('the change feed watched', () => {
  test('deaf: one warn line and the gauge at 0; heard again: one line and 1', async () => {
    expect(await heard()).toBe('1')
    expect(lines('the change feed is not heard')).toEqual([])
    await admin.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`)
    await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = '${database}' AND application_name = 'trellis changes' AND query LIKE 'LISTEN%'`)
    await until('the warn line', async () => lines('the change feed is not heard').length === 1)
    expect(JSON.parse(lines('the change feed is not heard')[0]!).level).toBe('warn')
    expect(await heard()).toBe('0')
    await admin.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`)
    await until('heard again', async () => lines('the change feed is heard again').length === 1, 20_000)
    expect(await heard()).toBe('1')
    expect(lines('the change feed is not heard')).toHaveLength(1)
  })
})
