// The read memo: bounded, it makes room for new results by dropping ones not read lately (never refusing one);
// list pages are keyed on their known parameters only, and results that depend on the time are made again when it
// moves past them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { readMemo } from '../src/store/memo.ts'
import { openRecords } from '../src/store/open.ts'
import type { Records } from '../src/store/stores.ts'
import { openContent } from '../src/content/open.ts'
import type { ContentStore } from '../src/content/store.ts'
import { loadSecret } from '../src/store/sqlite/secret-file.ts'
import { configFrom } from '../src/config.ts'
import { buildApp, buildServices } from '../src/app.ts'
import { setClockOffset } from '../src/lib/clock.ts'
import { tempDir } from '../dev/server.ts'
import { call, createEntry, createFeed, newWallet, type InProcess } from '../dev/api.ts'

/** A connection's writes as a version: SQLite's total_changes() moves on each. */
const changesOf = (db: Database) => ({
  version: () => db.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n,
  live: () => true,
})

describe('readMemo', () => {
  test('a memo of size 0 (TRELLIS_READ_MEMO_MB=0) keeps nothing: every read is made again', async () => {
    const memo = readMemo(changesOf(new Database(':memory:')), 0)
    let computed = 0
    for (let i = 0; i < 3; i++) expect(memo('k', () => `v${++computed}`)).toBe(`v${i + 1}`)
    for (let i = 0; i < 3; i++) await memo.get('a', async () => `v${++computed}`)
    expect(computed).toBe(6)
    expect(memo.peek('k')).toBeUndefined()
    expect(memo.stats()).toMatchObject({ entries: 0, chars: 0 })
  })

  test('a result read often stays held while a flood of others passes through a full memo; none is refused', () => {
    const memo = readMemo(changesOf(new Database(':memory:')), 10_000)
    let hotComputed = 0
    const hot = () => memo('hot', () => (hotComputed++, 'h'.repeat(200)))
    for (let i = 0; i < 5_000; i++) {
      hot()
      const key = `flood-${i}`
      memo(key, () => 'f'.repeat(300))
      // The newest result is always held: a full memo makes room rather than refusing it.
      let again = 0
      memo(key, () => (again++, ''))
      expect(again).toBe(0)
      expect(memo.stats().chars).toBeLessThanOrEqual(10_000)
    }
    expect(hotComputed).toBe(1)
  })

  test('a result is made again once the time it said it goes stale has come', () => {
    let now = 100
    const memo = readMemo(changesOf(new Database(':memory:')), 10_000, () => now)
    let computed = 0
    const read = () => memo('k', (staleFrom) => (computed++, staleFrom(105), staleFrom(103), `v${computed}`))
    expect(read()).toBe('v1')
    now = 102
    expect(read()).toBe('v1')
    now = 103
    expect(read()).toBe('v2')
    expect(memo.stats().entries).toBe(1)
  })

  test('every result is dropped when the database is written', () => {
    const db = new Database(':memory:')
    const memo = readMemo(changesOf(db))
    db.exec('CREATE TABLE t (x)')
    memo('k', () => 'a')
    db.exec('INSERT INTO t VALUES (1)')
    expect(memo('k', () => 'b')).toBe('b')
  })
})

describe('readMemo, asynchronous reads', () => {
  const versioned = () => {
    const source = { n: 0, live: true }
    return { source, memo: readMemo({ version: () => source.n, live: () => source.live }, 10_000) }
  }

  test('peek answers only what is held; get keeps what it read, and callers meanwhile share the read', async () => {
    const { memo } = versioned()
    expect(memo.peek('k')).toBeUndefined()
    let reads = 0
    const read = () => memo.get('k', async () => (reads++, await Bun.sleep(5), 'v'))
    expect(await Promise.all([read(), read(), read()])).toEqual(['v', 'v', 'v'])
    expect(reads).toBe(1)
    expect(memo.peek('k')).toBe('v')
    expect(await read()).toBe('v')
    expect(reads).toBe(1)
  })

  test('a read during which the records changed is answered but not kept; a change drops everything held', async () => {
    const { source, memo } = versioned()
    let reads = 0
    const value = await memo.get('k', async () => (reads++, source.n++, await Bun.sleep(1), 'maybe stale'))
    expect(value).toBe('maybe stale')
    expect(memo.peek('k')).toBeUndefined()
    await memo.get('k', async () => (reads++, 'fresh'))
    expect(memo.peek('k')).toBe('fresh')
    source.n++
    expect(memo.peek('k')).toBeUndefined()
    expect(reads).toBe(2)
  })

  test('while changes cannot be heard of, nothing is kept', async () => {
    const { source, memo } = versioned()
    await memo.get('k', async () => 'a')
    source.live = false
    expect(memo.peek('k')).toBeUndefined()
    await memo.get('k', async () => 'b')
    expect(memo('k2', () => 'c')).toBe('c')
    expect(memo.peek('k')).toBeUndefined()
    expect(memo.peek('k2')).toBeUndefined()
    source.live = true
    await memo.get('k', async () => 'd')
    expect(memo.peek('k')).toBe('d')
  })
})

describe('the list routes', () => {
  let dataDir: string
  let content: ContentStore
  let records: Records
  let services: Awaited<ReturnType<typeof buildServices>>
  let api: InProcess
  const origin = 'http://127.0.0.1:3000'
  let feedId: string

  beforeAll(async () => {
    dataDir = tempDir('trellis-memo-')
    records = await openRecords({ engine: 'sqlite', dataDir }, 'migrate', { assertNoIo: true })
    content = await openContent(dataDir)
    const errors: unknown[] = []
    services = await buildServices({
      config: configFrom({ TRELLIS_DATA_DIR: dataDir, TRELLIS_LOG: 'warn' }),
      records,
      content,
      secret: loadSecret(dataDir),
      publicUrl: () => origin,
      health: () => ({}),
      logError: (e) => errors.push(e),
      logWarn: () => {},
    })
    const app = buildApp(services, (e) => errors.push(e))
    api = {
      url: origin,
      async handle(request) {
        const response = await app.handle(request)
        if (errors.length) throw new Error(`unhandled error: ${String(errors[0])}`)
        return response
      },
    }
    const owner = newWallet()
    feedId = (await createFeed(api, owner)).id
    await createEntry(api, owner, feedId)
    await createEntry(api, owner, feedId, { is_free: false, price: { amount: '1000' }, expires_at: Math.floor(Date.now() / 1000) + 3_600 })
  })
  afterAll(async () => {
    setClockOffset(0)
    await content.close()
    await records.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('nonces asked for move no version: the memo keeps what it holds', async () => {
    setClockOffset(0)
    const path = `/v1/feeds/${feedId}/entries`
    expect((await call(api, 'GET', path)).status).toBe(200)
    const version = records.changes.version()
    const { hits } = services.cached.stats()
    for (let i = 0; i < 3; i++)
      expect((await call(api, 'POST', '/v1/auth/nonce', { body: { wallet_address: newWallet().address } })).status).toBe(200)
    expect(records.changes.version()).toBe(version)
    expect((await call(api, 'GET', path)).status).toBe(200)
    expect(services.cached.stats().hits).toBe(hits + 1)
  })

  test('parameters a list does not know, and the passing seconds, make no new results', async () => {
    setClockOffset(0)
    const lists = [
      `/v1/feeds/${feedId}/entries`,
      '/v1/feeds',
      '/v1/transactions',
      `/v1/feeds/${feedId}/entries?page_size=5`,
      '/v1/feeds?page_size=5',
    ]
    for (const path of lists) expect((await call(api, 'GET', path)).status).toBe(200)
    const held = services.cached.stats().entries
    for (let i = 0; i < 200; i++) {
      setClockOffset(i % 7) // clients poll across many seconds
      for (const path of lists) {
        const reply = await call(api, 'GET', `${path}${path.includes('?') ? '&' : '?'}cache_buster_${i}=${i}`)
        expect(reply.status).toBe(200)
      }
    }
    expect(services.cached.stats().entries).toBe(held)
  })

  test('a paid entry whose early access ends turns free in the list, with no write in between', async () => {
    setClockOffset(0)
    const before = await call(api, 'GET', `/v1/feeds/${feedId}/entries`)
    const paid = before.body.data.find((e: { expires_at: number | null }) => e.expires_at !== null)
    expect(paid).toMatchObject({ is_free: false, price: '1000' })
    const hits = services.cached.stats().hits
    expect((await call(api, 'GET', `/v1/feeds/${feedId}/entries`)).body).toEqual(before.body)
    expect(services.cached.stats().hits).toBe(hits + 1) // served from the memo meanwhile
    setClockOffset(paid.expires_at - Math.floor(Date.now() / 1000) + 1)
    const after = await call(api, 'GET', `/v1/feeds/${feedId}/entries`)
    expect(after.body.data.find((e: { id: string }) => e.id === paid.id)).toMatchObject({ is_free: true, price: '0' })
  })

  test('max_age and min_age pages follow the clock', async () => {
    setClockOffset(0)
    const recent = async () => (await call(api, 'GET', '/v1/feeds?max_age=600')).body.data.map((f: { id: string }) => f.id)
    const older = async () => (await call(api, 'GET', '/v1/feeds?min_age=600')).body.data.map((f: { id: string }) => f.id)
    expect(await recent()).toContain(feedId)
    expect(await older()).not.toContain(feedId)
    setClockOffset(1_200)
    expect(await recent()).not.toContain(feedId)
    expect(await older()).toContain(feedId)
  })
})
