// trellis gc: the blocks an unused CAR import leaves behind are removed (a failed upload leaves none: its content
// waits in a file until its body is read whole), and nothing any record names is ever touched — not while uploads
// arrive during the collection, not content an upload shares with an orphan being deleted at that moment.
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { LevelBlockstore } from 'blockstore-level'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { openContent } from '../src/content/open.ts'
import { withDataStores } from '../src/ops/data-stores.ts'
import { configFrom } from '../src/config.ts'
import { heldBlocks } from '../src/content/level/held-blocks.ts'
import { blockKey } from '../src/content/level/keys.ts'
import { openLevelBlockSpace } from '../src/content/level/block-space.ts'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { authHeaders, b64, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

/**
 * For a collection on a stopped server: nothing is under way. (LevelDB's store knows so by itself, since it is the only
 * process on it; in PostgreSQL, where other instances may be importing, the operator says so with a grace of 0.)
 */
const STOPPED = { TRELLIS_GC_GRACE_S: '0' }

const servers: TestServer[] = []
afterAll(async () => {
  for (const server of servers) await server.dispose()
})
const start = async () => {
  const server = await startTestServer()
  servers.push(server)
  return server
}

/**
 * Blocks in a stopped server's store, and the bytes its files take; in PostgreSQL, the bytes its rows hold (a
 * collection's DELETE leaves their room to autovacuum to reuse, as block-space.ts says: the files keep their size).
 */
async function storeOf(server: TestServer) {
  if (server.recordsEnv.TRELLIS_DATABASE_URL) {
    const row = await withRecords(server, (db) =>
      db.get<{ count: string; bytes: string }>('SELECT COUNT(*) AS count, COALESCE(SUM(size), 0) AS bytes FROM blocks'),
    )
    return { count: Number(row!.count), bytes: Number(row!.bytes) }
  }
  const dataDir = server.dataDir
  const blocks = new LevelBlockstore(join(dataDir, 'blocks'))
  await blocks.open()
  let count = 0
  for await (const key of blocks.db.keys()) if (key !== '/trellis-sync-barrier') count++
  await blocks.close()
  const bytes = readdirSync(join(dataDir, 'blocks')).reduce((sum, name) => sum + statSync(join(dataDir, 'blocks', name)).size, 0)
  return { count, bytes }
}

const random = (size: number) => {
  const bytes = new Uint8Array(size)
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65_536)))
  return bytes
}

const contentOf = async (url: string, feedId: string, entryId: string) =>
  new Uint8Array(await (await fetch(`${url}/v1/feeds/${feedId}/entries/${entryId}/content`)).arrayBuffer())

/** A raw HTTP upload of a large entry that sends the first half of its body; the rest when `finish` is called. */
async function halfUpload(url: string, owner: Wallet, feedId: string, content: Uint8Array) {
  const body = JSON.stringify({ content_base64: b64(content), mime_type: 'video/mp4' })
  const headers = {
    host: '127.0.0.1',
    'content-type': 'application/json',
    'content-length': String(body.length),
    connection: 'close',
    ...(await authHeaders(url, owner)),
  }
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk) => (answer += chunk))
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  await new Promise<void>((resolve) => socket.on('connect', resolve))
  socket.write(
    `POST /v1/feeds/${feedId}/entries HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  )
  await new Promise<void>((resolve) => socket.write(body.slice(0, body.length / 2), () => resolve()))
  await Bun.sleep(500) // the server takes what it has so far
  return {
    abandon: async () => (socket.destroy(), await closed),
    finish: async () => {
      socket.write(body.slice(body.length / 2))
      await closed
      return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    },
  }
}

describe('trellis gc', () => {
  test('an abandoned upload leaves no orphan; those of an unused CAR are spared while fresh, then ' +
    'collected; every named item stays whole', async () => {
    const server = await start()
    const owner = newWallet()
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), random(300)])
    const feed = await createFeed(server.url, owner, { name: 'kept', image_url: `data:image/png;base64,${b64(png)}` })
    const named = [random(40), random(3 * 1024 * 1024 + 5), random(700_000)]
    const entries = []
    for (const bytes of named)
      entries.push(await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'application/pdf' }))
    const paid = await createEntry(server.url, owner, feed.id, {
      content_base64: b64('paid'),
      mime_type: 'text/plain',
      is_free: false,
      price: { amount: '1000' },
    })

    // A client that goes away halfway through a 9 MB upload: nothing of it was stored.
    await (await halfUpload(server.url, owner, feed.id, random(9 * 1024 * 1024))).abandon()
    expect((await trellis(['gc', '--dry-run'], server.dataDir)).json).toMatchObject({ spared: 0, removed: 0 })
    expect(readdirSync(join(server.dataDir, 'cache', 'uploads'))).toEqual([])
    // Orphans: a CAR of an item no record here names.
    const elsewhere = await start()
    const foreign = await createEntry(elsewhere.url, owner, (await createFeed(elsewhere.url, owner)).id, {
      content_base64: b64(random(4 * 1024 * 1024 + 17)),
      mime_type: 'application/pdf',
    })
    const car = join(elsewhere.dataDir, 'foreign.car')
    expect((await trellis(['export-car', foreign.cid, '--out', car], elsewhere.dataDir)).code).toBe(0)
    expect((await trellis(['import-car', car], server.dataDir)).code).toBe(0)

    // Online, right after: the orphans are fresh (an upload's record may be about to be committed), so spared.
    const online = await trellis(['gc'], server.dataDir)
    expect(online.code).toBe(0)
    expect(online.json).toMatchObject({ removed: 0, removed_bytes: 0, dry_run: false })
    expect(online.json.spared).toBeGreaterThanOrEqual(4)
    const kept = online.json.kept
    expect(server.logs.some((line) => line.includes('"msg":"operation"') && line.includes('"gc"'))).toBe(true)
    // What operations did shows in /metrics: a backup refused (its target is not empty) is an error.
    expect((await trellis(['backup', server.dataDir], server.dataDir)).code).toBe(1)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toContain('trellis_operations_total{command="gc",result="ok"} 2') // the dry run and this one
    expect(metrics).toContain('trellis_operations_total{command="backup",result="error"} 1')
    expect(metrics).toContain('trellis_operations_total{command="import-car",result="ok"} 1')
    const lastGc = Number(/^trellis_operation_last_success_timestamp_seconds\{command="gc"\} ([\d.]+)$/m.exec(metrics)?.[1])
    expect(Math.abs(lastGc - Date.now() / 1000)).toBeLessThan(30)
    expect(metrics).not.toContain('trellis_operation_last_success_timestamp_seconds{command="backup"}')

    // On the stopped server nothing is under way: a dry run counts them, gc removes exactly those.
    await server.stop()
    const before = await storeOf(server)
    expect(before.count).toBe(kept + online.json.spared)
    const dry = await trellis(['gc', '--dry-run'], server.dataDir, STOPPED)
    expect(dry.json).toMatchObject({ kept, spared: 0, removed: online.json.spared, dry_run: true })
    expect(dry.json.removed_bytes).toBeGreaterThan(3 * 1024 * 1024)
    expect((await storeOf(server)).count).toBe(before.count)
    const done = await trellis(['gc'], server.dataDir, STOPPED)
    expect(done.code).toBe(0)
    expect(done.json).toEqual({ ...dry.json, dry_run: false })
    const after = await storeOf(server)
    expect(after.count).toBe(kept)
    expect(after.bytes).toBeLessThan(before.bytes - 3 * 1024 * 1024) // the space is given back, not only the keys
    expect((await trellis(['gc'], server.dataDir, STOPPED)).json).toMatchObject({ kept, removed: 0 })
    const verified = await trellis(['verify'], server.dataDir)
    expect(verified.code).toBe(0)

    await server.restart()
    for (const [i, entry] of entries.entries()) expect(Buffer.compare(await contentOf(server.url, feed.id, entry.id), named[i]!)).toBe(0)
    const cover = await fetch(`${server.url}/v1/feeds/${feed.id}/image`)
    expect(cover.status).toBe(200)
    expect(Buffer.compare(new Uint8Array(await cover.arrayBuffer()), png)).toBe(0)
    const owned = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}/content`, {
      headers: await authHeaders(server.url, owner),
    })
    expect(await owned.text()).toBe('paid')
  }, 120_000)

  test('an upload under way across a collection: stored only once read whole, it completes whole', async () => {
    const server = await start()
    const owner = newWallet()
    const feed = await createFeed(server.url, owner)
    const content = random(12 * 1024 * 1024 + 3)
    const upload = await halfUpload(server.url, owner, feed.id, content)
    expect(readdirSync(join(server.dataDir, 'cache', 'uploads'))).toHaveLength(1) // the half that has arrived
    const collected = await trellis(['gc'], server.dataDir)
    expect(collected.json).toMatchObject({ removed: 0, spared: 0 })
    const entry = await upload.finish()
    expect(entry.cid).toStartWith('bafy')
    expect(Buffer.compare(await contentOf(server.url, feed.id, entry.id), content)).toBe(0)
    await server.stop()
    expect((await trellis(['verify'], server.dataDir)).code).toBe(0)
  }, 120_000)

  test('uploads of the very bytes of old orphans while they are collected: every entry whole, the rest removed', async () => {
    const server = await start()
    const owner = newWallet()
    const feed = await createFeed(server.url, owner)
    await server.stop()
    // Old orphans, written by the content store itself on the stopped server: not recent for the server that starts.
    const items = Array.from({ length: 3000 }, (_, i) => random(i % 50 === 0 ? 300_000 : 64 + (i % 900)))
    const url = server.recordsEnv.TRELLIS_DATABASE_URL
    await withDataStores(configFrom({ TRELLIS_DATA_DIR: server.dataDir, ...server.recordsEnv }), async (_, content) => {
      for (const bytes of items) await content.put(bytes)
    })
    // PostgreSQL knows a block's age by its stamp, not by which process wrote it: old orphans are stamped long ago.
    if (url) await withRecords(server, (db) => db.run('UPDATE blocks SET stored_at = stored_at - ?', [2 * 86_400_000]))
    const total = (await storeOf(server)).count
    await server.restart()

    // The same bytes uploaded as entries (every third item, eight at a time) while the collection runs.
    const chosen = items.filter((_, i) => i % 3 === 0)
    const created: Array<{ id: string; bytes: Uint8Array }> = []
    let next = 0
    const uploads = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < chosen.length) {
          const bytes = chosen[next++]!
          created.push({
            id: (await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'application/pdf' })).id,
            bytes,
          })
        }
      }),
    )
    await Bun.sleep(200)
    const [collected] = await Promise.all([trellis(['gc'], server.dataDir), uploads])
    expect(collected.code).toBe(0)
    expect(collected.json.removed).toBeGreaterThan(0)
    expect(collected.json.kept + collected.json.spared + collected.json.removed).toBeLessThanOrEqual(total)
    for (const { id, bytes } of created) expect(Buffer.compare(await contentOf(server.url, feed.id, id), bytes)).toBe(0)

    await server.stop()
    const verified = await trellis(['verify'], server.dataDir)
    expect(verified.json).toMatchObject({ ok: true, items: { checked: created.length, problems: [] } })
    const after = await trellis(['gc'], server.dataDir, STOPPED) // what was spared then is an orphan now, except what entries name
    expect(after.json.spared).toBe(0)
    expect((await storeOf(server)).count).toBe(after.json.kept)
    console.log(`gc over ${total} blocks while ${chosen.length} uploads of the same bytes ran: ${JSON.stringify(collected.json)}`)
  }, 180_000)
})

describe('the content store collecting while it imports', () => {
  // Interleaves as many imports with the sweep as one process can; the delete's lock is argued in
  // content/level/block-space.ts (the window it closes is a few microtasks wide: the next test opens it on purpose).
  test('20,000 imports of the orphans being collected, sixteen at a time: not one block lost', async () => {
    const dir = tempDir('trellis-gc-store-')
    try {
      const items = Array.from({ length: 20_000 }, (_, i) => new TextEncoder().encode(`orphan ${i} ${crypto.randomUUID()}`))
      let content = await openContent(dir)
      const cids = await Promise.all(items.map((bytes) => content.put(bytes).then((stored) => stored.cid)))
      await content.close()
      content = await openContent(dir) // a new process: nothing is recent
      // Every item is imported again while the collection (which no record names any of) runs: each import either
      // finds its block before the collection reaches it (spared) or after it is gone (written again).
      const order = [...items.keys()].sort(() => Math.random() - 0.5)
      let next = 0
      const importing = Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < order.length) await content.put(items[order[next++]!]!)
        }),
      )
      const [collected] = await Promise.all([content.collect(() => [], { dryRun: false, progress: () => {} }), importing])
      await expect(content.collect(() => [], { dryRun: true, progress: () => {} })).resolves.toMatchObject({ removed: 0 })
      const twice = [
        content.collect(() => [], { dryRun: true, progress: () => {} }),
        content.collect(() => [], { dryRun: true, progress: () => {} }),
      ]
      await expect(twice[1]).rejects.toThrow('a collection is already running')
      await twice[0]
      const missing = []
      for (const cid of cids) if (await content.check(cid)) missing.push(cid)
      await content.close()
      expect(collected.kept + collected.spared + collected.removed).toBe(items.length)
      expect(missing).toEqual([])
      console.log(`collection while 20,000 imports of its orphans ran: ${JSON.stringify(collected)}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('the LevelDB space removing a block while an import writes it', () => {
  // The window the space's lock closes, opened on purpose: each import notes and puts the block a little later than
  // the last, from before the removal looks at it to after. Without the lock some blocks are lost here.
  test('the block is either spared or written again after the delete, never lost', async () => {
    const dir = tempDir('trellis-gc-space-')
    const space = await openLevelBlockSpace(join(dir, 'blocks'))
    try {
      const outcomes = { lost: 0, spared: 0, rewritten: 0 }
      for (let i = 0; i < 3000; i++) {
        const bytes = new TextEncoder().encode(`block ${i}`)
        const cid = CID.createV1(raw.code, await sha256.digest(bytes))
        await space.put(cid, bytes)
        const removal = space.removeUnreferenced([blockKey(cid)], null)
        const hold = space.holds.begin()
        const importing = (async () => {
          for (let turn = 0; turn < i % 30; turn++)
            await (turn % 3 === 2 ? new Promise((resolve) => setImmediate(resolve)) : Promise.resolve())
          hold.note(cid)
          await space.put(cid, bytes)
        })()
        const [{ removed }] = await Promise.all([removal, importing])
        hold.end()
        if (!(await space.has(cid))) outcomes.lost++
        else outcomes[removed === 1 ? 'rewritten' : 'spared']++
      }
      expect(outcomes.lost).toBe(0)
      expect(outcomes.spared).toBeGreaterThan(0)
      expect(outcomes.rewritten).toBeGreaterThan(0)
    } finally {
      await space.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('which blocks imports hold', () => {
  test('an import holds its own blocks while it runs and a grace period after; a slow one holds nothing else', async () => {
    // The grace runs by a clock the test moves, not by how long the machine takes between two lines.
    let now = 1_000_000
    const held = heldBlocks(100, () => now)
    const [slowBlock, quickBlock, shared] = await Promise.all(
      ['slow', 'quick', 'shared'].map(async (text) => CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode(text)))),
    )
    const heldNow = () => [slowBlock, quickBlock, shared].map((cid) => held.isHeld(blockKey(cid!)))
    const slow = held.begin()
    slow.note(slowBlock!)
    slow.note(shared!)
    const quick = held.begin()
    quick.note(quickBlock!)
    quick.note(shared!)
    quick.end()
    expect(heldNow()).toEqual([true, true, true])
    now += 100
    expect(heldNow()).toEqual([true, true, true]) // the whole grace
    now += 1
    // Past the grace: the ended import holds nothing; the running one still holds its own, the shared one too.
    expect(heldNow()).toEqual([true, false, true])
    slow.end()
    expect(heldNow()).toEqual([true, false, true])
    now += 101
    expect(heldNow()).toEqual([false, false, false])
  })
})
