// GET /metrics: every series described, its costly counts kept for a while, rate limited like any route, and
// behind the admin key when asked to be.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer, tempDir, type TestServer } from '../dev/server.ts'
import { call, createEntry, createFeed, expectError, newWallet } from '../dev/api.ts'
import { openRecords } from '../src/store/open.ts'
import { marketSize } from '../src/domain/market-size.ts'
import { ConfigError, configFrom } from '../src/config.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ TRELLIS_RATE_LIMIT: 'on' })
})
afterAll(() => server.dispose())

/** The metric family of a sample line: its name, less a histogram's or summary's suffix when the family is one. */
function familyOf(sample: string, types: Map<string, string>): string {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(sample)![0]
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.slice(0, -suffix.length)
    if (name.endsWith(suffix) && ['histogram', 'summary'].includes(types.get(base) ?? '')) return base
  }
  return name
}

test('every series in /metrics has # HELP and # TYPE, once each, before its samples', async () => {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  await createEntry(server.url, owner, feed.id)
  await call(server.url, 'GET', `/v1/feeds/${feed.id}`)
  const reply = await fetch(`${server.url}/metrics`)
  expect(reply.status).toBe(200)
  const lines = (await reply.text()).split('\n').filter(Boolean)
  const helps = new Map<string, number>()
  const types = new Map<string, string>()
  const problems: string[] = []
  const families = new Set<string>()
  for (const [i, line] of lines.entries()) {
    const meta = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line)
    if (meta) {
      const [, kind, name, rest] = meta
      if (kind === 'HELP') helps.set(name, (helps.get(name) ?? 0) + 1)
      else {
        if (types.has(name)) problems.push(`second TYPE of ${name}`)
        types.set(name, rest)
      }
      continue
    }
    if (line.startsWith('#')) continue
    const family = familyOf(line, types)
    families.add(family)
    if (!helps.has(family)) problems.push(`no HELP before line ${i}: ${line}`)
    if (!types.has(family)) problems.push(`no TYPE before line ${i}: ${line}`)
  }
  for (const [name, n] of helps) if (n > 1) problems.push(`${n} HELP lines for ${name}`)
  expect(problems).toEqual([])
  // The families the issue named without HELP are among those checked.
  for (const name of [
    'trellis_wallets',
    'trellis_active_feeds',
    'trellis_active_entries',
    'trellis_transactions',
    'trellis_pending_payments',
    'trellis_uptime_seconds',
  ]) {
    expect(families.has(name)).toBe(true)
  }
})

test('memory: the JavaScript heap, and the bounded caches filled by reads (content bytes, read results)', async () => {
  const sample = async (series: string) => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith(`${series} `))
    expect(line).toBeDefined()
    return Number(line!.split(' ')[1])
  }
  expect(await sample('trellis_js_heap_bytes{kind="used"}')).toBeGreaterThan(1024 * 1024)
  expect(await sample('trellis_js_heap_bytes{kind="total"}')).toBeGreaterThanOrEqual(
    (await sample('trellis_js_heap_bytes{kind="used"}')) * 0.5,
  )
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const bytes = 'x'.repeat(50_000)
  const contentBefore = await sample('trellis_cache_bytes{cache="content"}')
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: Buffer.from(bytes).toString('base64') })
  expect(await (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`)).text()).toBe(bytes)
  expect(await sample('trellis_cache_bytes{cache="content"}')).toBe(contentBefore + 50_000) // held once
  const listed = await fetch(`${server.url}/v1/feeds/${feed.id}/entries`)
  expect(listed.status).toBe(200)
  expect(await sample('trellis_cache_bytes{cache="reads"}')).toBeGreaterThan(0)
})

test('/metrics is rate limited like any other route', async () => {
  const first = await fetch(`${server.url}/metrics`)
  expect(first.headers.get('ratelimit-limit')).toBe('100')
  await first.text()
  const replies = await Promise.all(
    Array.from({ length: 100 }, () => fetch(`${server.url}/metrics`).then(async (r) => (await r.text(), r.status))),
  )
  expect(replies).toContain(429)
  expect(replies.filter((s) => s !== 200 && s !== 429)).toEqual([])
})

describe('the market sizes', () => {
  test('are counted at most once per period, then again once it has passed', async () => {
    const dir = tempDir('trellis-gauges-')
    const records = await openRecords({ engine: 'sqlite', dataDir: dir }, 'migrate')
    try {
      let ms = 0
      const gauges = marketSize(records.read, 15_000, () => ms)
      const value = async (name: string) => (await gauges()).find((g) => g.name === name)!.value
      expect(await value('wallets')).toBe(0)
      await records.transact((tx) => tx.wallets.ensure(crypto.randomUUID(), newWallet().address, 'base-sepolia', 1))
      ms += 14_000
      expect(await value('wallets')).toBe(0) // not counted again yet
      ms += 1_000
      expect(await value('wallets')).toBe(1)
    } finally {
      await records.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('TRELLIS_METRICS_AUTH=admin', () => {
  test('answers only with the admin-api-key header; 401 ADMIN_KEY_REQUIRED otherwise', async () => {
    const guarded = await startTestServer({ TRELLIS_ADMIN_KEY: 'metrics-key', TRELLIS_METRICS_AUTH: 'admin' })
    try {
      expectError(await call(guarded.url, 'GET', '/metrics'), 401, 'ADMIN_KEY_REQUIRED')
      expectError(await call(guarded.url, 'GET', '/metrics', { headers: { 'admin-api-key': 'wrong' } }), 401, 'ADMIN_KEY_REQUIRED')
      const allowed = await call(guarded.url, 'GET', '/metrics', { headers: { 'admin-api-key': 'metrics-key' } })
      expect(allowed.status).toBe(200)
      expect(allowed.text).toContain('# TYPE trellis_http_requests_total counter')
    } finally {
      await guarded.dispose()
    }
  })

  test('without TRELLIS_ADMIN_KEY the server refuses to start; any other value is refused too', () => {
    expect(() => configFrom({ TRELLIS_METRICS_AUTH: 'admin' })).toThrow(ConfigError)
    expect(() => configFrom({ TRELLIS_METRICS_AUTH: 'yes', TRELLIS_ADMIN_KEY: 'k' })).toThrow(ConfigError)
    expect(configFrom({}).metricsAuth).toBe('public')
  })
})
