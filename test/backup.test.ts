// trellis backup / restore / verify / export-car / import-car, from the command line as an operator runs them: a
// backup made while the server serves (and writes) restores into a server that answers the same, byte for byte;
// verify finds a damaged block; a damaged backup is refused; CAR files carry items between servers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LevelBlockstore } from 'blockstore-level'
import { CID } from 'multiformats/cid'
import { restoreTarget, startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

let server: TestServer
const scratch: string[] = []
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.dispose()
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

const dir = (prefix: string) => {
  const path = tempDir(prefix)
  scratch.push(path)
  return path
}

/** What a client sees of a feed: the feed, all its entries (every page), and each free entry's bytes. */
async function snapshotOf(url: string, feedId: string) {
  const feed = (await call(url, 'GET', `/v1/feeds/${feedId}`)).body
  const entries: Array<Record<string, any>> = []
  for (let token = ''; ; ) {
    const page = (await call(url, 'GET', `/v1/feeds/${feedId}/entries?page_size=100${token ? `&page_token=${token}` : ''}`)).body
    entries.push(...page.data)
    if (!page.pagination.has_more) break
    token = page.pagination.next_page_token
  }
  const bytes: Record<string, string> = {}
  for (const e of entries.filter((e) => e.is_free))
    bytes[e.id] = Buffer.from(await (await fetch(`${url}/v1/feeds/${feedId}/entries/${e.id}/content`)).arrayBuffer()).toString('base64')
  return { feed, entries, bytes }
}

describe('backup and restore', () => {
  test('a backup made while the server serves and writes restores into a server that answers the same', async () => {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, {
      name: 'kept',
      image_url: `data:image/png;base64,${b64(Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(40, 1)]))}`,
    })
    const big = crypto.getRandomValues(new Uint8Array(3 * 1024 * 1024 + 17)) // a multi-block item
    await createEntry(server.url, owner, feed.id, { content_base64: b64(big), mime_type: 'video/mp4' })
    for (let i = 0; i < 5; i++) await createEntry(server.url, owner, feed.id, { content_base64: b64(`note ${i}`), mime_type: 'text/plain' })
    await createEntry(server.url, owner, feed.id, {
      content_base64: b64('paid'),
      mime_type: 'text/plain',
      is_free: false,
      price: { amount: '1000' },
    })

    // Writes keep coming while the backup runs: the backup is one consistent moment of them.
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++)
        await createEntry(server.url, owner, feed.id, {
          content_base64: b64(crypto.getRandomValues(new Uint8Array(50_000 + i))),
          mime_type: 'application/pdf',
        })
    })()
    await Bun.sleep(100)
    const target = join(dir('trellis-backup-'), 'backup')
    const made = await trellis(['backup', target], server.dataDir)
    writing = false
    await writer
    expect(made.stderr).toContain('trellis backup: done')
    expect(made.code).toBe(0)
    expect(readdirSync(target).sort()).toEqual(['content.car', 'manifest.json', 'secret.key', 'trellis.db'])
    expect(made.json).toMatchObject({ format: 'trellis-backup', version: 1, counts: { feeds: 1 } })
    expect(made.json.counts.entries).toBeGreaterThanOrEqual(7)
    expect(server.logs.some((line) => line.includes('"msg":"operation"') && line.includes('backup'))).toBe(true) // done by the server

    const restoredDir = await restoreTarget(join(dir('trellis-restored-'), 'data'))
    const restored = await trellis(['restore', target], restoredDir)
    expect(restored.code).toBe(0)
    const other = await startTestServer({}, { dataDir: restoredDir })
    try {
      const live = await snapshotOf(server.url, feed.id)
      const after = await snapshotOf(other.url, feed.id)
      // The restored server has the backup's moment: the entries committed by then, each as the live server has it.
      expect(after.entries.length).toBe(made.json.counts.entries)
      expect(after.feed.total_entries).toBe(after.entries.length)
      expect(after.entries.length).toBeGreaterThanOrEqual(7)
      expect(after.entries.length).toBeLessThan(live.entries.length) // the writes during the backup are not in it
      const liveById = new Map(live.entries.map((e) => [e.id, e]))
      for (const e of after.entries) {
        expect(e).toEqual(liveById.get(e.id)!)
        expect(after.bytes[e.id]).toBe(live.bytes[e.id])
      }
      expect(Buffer.from(after.bytes[after.entries.find((e) => e.mime_type === 'video/mp4')!.id]!, 'base64').equals(Buffer.from(big))).toBe(
        true,
      )
      // The cover, the key (page tokens, content URLs) and the paid entry's 402 came along.
      expect((await fetch(`${other.url}/v1/feeds/${feed.id}/image`)).status).toBe(200)
      const page = (await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=1`)).body.pagination.next_page_token
      expect((await call(other.url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=1&page_token=${page}`)).status).toBe(200)
      const paid = after.entries.find((e) => !e.is_free)!
      expect((await call(other.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}`)).status).toBe(402)
    } finally {
      await other.stop() // the data directory stays, to be verified offline
    }
    const checked = await trellis(['verify'], restoredDir)
    expect(checked.stdout + checked.stderr).toContain('"ok": true')
    expect(checked.code).toBe(0)
    expect(checked.json).toMatchObject({ ok: true, integrity: [], inconsistencies: [], items: { problems: [] } })
  })

  test('a restored data directory, a backup and what commands write on a stopped server are owner-only', async () => {
    const loose = (root: string) => {
      const found: string[] = []
      const visit = (path: string) => {
        const stat = lstatSync(path)
        if ((stat.mode & 0o777) !== (stat.isDirectory() ? 0o700 : 0o600))
          found.push(`${path.slice(root.length)} ${(stat.mode & 0o777).toString(8)}`)
        if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
      }
      visit(root)
      return found
    }
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'private' })
    await createEntry(server.url, owner, feed.id, {
      content_base64: b64(crypto.getRandomValues(new Uint8Array(400_000))),
      mime_type: 'application/pdf',
    })
    const target = join(dir('trellis-backup-'), 'backup')
    expect((await trellis(['backup', target], server.dataDir)).code).toBe(0)
    expect(loose(target)).toEqual([])
    const restoredDir = join(dir('trellis-restored-'), 'data')
    expect((await trellis(['restore', target], restoredDir)).code).toBe(0)
    expect(loose(restoredDir)).toEqual([])
    // On a stopped server's data the commands open the stores themselves: LevelDB writes new files (an item the
    // restored records do not name goes in, and gc removes it again).
    const later = await createEntry(server.url, owner, feed.id, {
      content_base64: b64(crypto.getRandomValues(new Uint8Array(400_000))),
      mime_type: 'application/pdf',
    })
    const car = join(dir('trellis-car-'), 'items.car')
    expect((await trellis(['export-car', later.cid, '--out', car], server.dataDir)).code).toBe(0)
    expect((await trellis(['import-car', car], restoredDir)).code).toBe(0)
    const collected = await trellis(['gc'], restoredDir)
    expect(collected.json).toMatchObject({ removed: 3, dry_run: false })
    expect(loose(restoredDir)).toEqual([])
  })

  test('backup and restore refuse a directory that is not empty; a damaged backup is refused', async () => {
    const full = dir('trellis-full-')
    writeFileSync(join(full, 'something'), 'x')
    const refused = await trellis(['backup', full], server.dataDir)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is not empty')

    const target = join(dir('trellis-backup-'), 'b')
    expect((await trellis(['backup', target], server.dataDir)).code).toBe(0)
    expect((await trellis(['restore', target], server.dataDir)).stderr).toContain('is not empty')
    const car = readFileSync(join(target, 'content.car'))
    car[car.length - 10] ^= 0xff
    writeFileSync(join(target, 'content.car'), car)
    const damaged = await trellis(['restore', target], join(dir('trellis-restored-'), 'data'))
    expect(damaged.code).toBe(1)
    expect(damaged.stderr).toContain('content.car does not match its SHA-256')
    expect((await trellis(['backup'], server.dataDir)).code).toBe(2) // usage
  })

  test('1,000 entries: backup and restore times', async () => {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'a thousand' })
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          createEntry(server.url, owner, feed.id, { content_base64: b64(`entry ${i + j} ${'x'.repeat(200)}`), mime_type: 'text/plain' }),
        ),
      )
    }
    const target = join(dir('trellis-backup-'), 'b')
    let started = performance.now()
    const made = await trellis(['backup', target], server.dataDir)
    const backupMs = performance.now() - started
    expect(made.code).toBe(0)
    started = performance.now()
    const restoredDir = join(dir('trellis-restored-'), 'data')
    expect((await trellis(['restore', target], restoredDir)).code).toBe(0)
    const restoreMs = performance.now() - started
    console.log(
      `backup of ${made.json.counts.entries} entries (${made.json.counts.blocks} ` +
        `blocks, ${(made.json.files['content.car'].bytes / 1024).toFixed(0)} KiB ` +
        `CAR): ${backupMs.toFixed(0)} ms; restore: ${restoreMs.toFixed(0)} ms (each including a bun ` +
        `start of ~300 ms)`,
    )
    expect(made.json.counts.entries).toBeGreaterThanOrEqual(1000)
  }, 120_000)
})

describe('verify', () => {
  test("a block that no longer hashes to its CID is found, on a stopped server's data directory", async () => {
    const other = await startTestServer()
    const owner = newWallet()
    const feed = await createFeed(other.url, owner)
    const entry = await createEntry(other.url, owner, feed.id, { content_base64: b64('to be damaged'), mime_type: 'text/plain' })
    await createEntry(other.url, owner, feed.id, { content_base64: b64('intact'), mime_type: 'text/plain' })
    expect((await trellis(['verify'], other.dataDir)).json.ok).toBe(true) // online, through the server
    await other.stop()
    const damaged = new TextEncoder().encode('something else')
    if (other.recordsEnv.TRELLIS_DATABASE_URL) {
      // Its content is in PostgreSQL's blocks table, a row per block by multihash.
      await withRecords(other, (db) =>
        db.run('UPDATE blocks SET bytes = ?, size = ? WHERE mh = ?', [damaged, damaged.byteLength, CID.parse(entry.cid).multihash.bytes]),
      )
    } else {
      const blocks = new LevelBlockstore(join(other.dataDir, 'blocks'))
      await blocks.open()
      await blocks.put(CID.parse(entry.cid), damaged)
      await blocks.close()
    }
    const found = await trellis(['verify'], other.dataDir)
    expect(found.code).toBe(1)
    expect(found.json.ok).toBe(false)
    expect(found.json.items.problems).toEqual([{ cid: entry.cid, problem: `block ${entry.cid} does not hash to its CID` }])
    await other.dispose()
  })
})

describe('CAR files', () => {
  test('export-car from one server and import-car into another carry an item, block for block', async () => {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner)
    const bytes = crypto.getRandomValues(new Uint8Array(600_000))
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'application/pdf' })
    const car = join(dir('trellis-car-'), 'item.car')
    const exported = await trellis(['export-car', entry.cid, '--out', car], server.dataDir)
    expect(exported.code).toBe(0)
    expect(exported.json).toMatchObject({ roots: [entry.cid] })
    expect(exported.json.blocks).toBeGreaterThan(1)

    const other = await startTestServer()
    try {
      const imported = await trellis(['import-car', car], other.dataDir)
      expect(imported.json).toEqual({ roots: [entry.cid], blocks: exported.json.blocks })
      const again = join(dir('trellis-car-'), 'again.car')
      expect((await trellis(['export-car', entry.cid, '--out', again], other.dataDir)).code).toBe(0)
      expect(readFileSync(again).equals(readFileSync(car))).toBe(true)
      // The same bytes uploaded there give the same CID, found already stored.
      expect(
        (
          await createEntry(other.url, owner, (await createFeed(other.url, owner)).id, {
            content_base64: b64(bytes),
            mime_type: 'application/pdf',
          })
        ).cid,
      ).toBe(entry.cid)
    } finally {
      await other.dispose()
    }
    const bad = join(dir('trellis-car-'), 'bad.car')
    const tampered = readFileSync(car)
    tampered[tampered.length - 5] ^= 0xff
    writeFileSync(bad, tampered)
    const refused = await trellis(['import-car', bad], server.dataDir)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('does not match its CID')
    expect(existsSync(bad)).toBe(true)
  })
})
