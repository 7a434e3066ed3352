// The PostgreSQL block space (src/store/postgres/blocks/table-space.ts) on a throwaway cluster: the Blockstore contract
// (interface-blockstore-tests, also run against the LevelDB space), a put and a collection crossing on one row, the
// grace a collection spares by, one row per multihash, listings in pages, and the content store over it.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, mock, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { SQL } from 'bun'
// @ts-expect-error chai 4 ships no types (aegir brings @types/chai); only its expect is handed on, to the suite
import chai from 'chai'
// @ts-expect-error as above (@types/chai-as-promised)
import chaiAsPromised from 'chai-as-promised'
import chaiParentheses from 'chai-parentheses'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { tempDir } from '../dev/server.ts'
import { openPostgresBlockSpace } from '../src/store/postgres/blocks/table-space.ts'
import { openLevelBlockSpace, type LevelBlockSpace } from '../src/content/level/block-space.ts'
import { openContent, openSharedContent } from '../src/content/open.ts'
import { concatChunks } from '../src/lib/chunks.ts'
import type { BlockSpace } from '../src/content/store.ts'

// The contract suite is written for mocha with aegir's chai. aegir itself is a whole toolchain (~400 packages): its
// chai is chai 4 with chai-as-promised and chai-parentheses (the plugins the suite's assertions use), set up here the
// same way, and mocha's globals are bun:test's.
chai.use(chaiAsPromised)
chai.use(chaiParentheses)
mock.module('aegir/chai', () => ({ chai, expect: chai.expect, assert: chai.assert }))
Object.assign(globalThis, { describe, it, beforeEach, afterEach })
const { interfaceBlockstoreTests } = await import('interface-blockstore-tests')

let postgres: Postgres
const clients: SQL[] = []
const scratch: string[] = []
/** A database of its own on the cluster (so each part of this file starts with no table), and a client for it. */
async function database(name: string, max = 10): Promise<SQL> {
  const admin = new SQL(postgres.adminUrl, { max: 1 })
  await admin.unsafe(`CREATE DATABASE ${name}`)
  await admin.close()
  return client(name, max)
}
function client(name: string, max = 10): SQL {
  const sql = new SQL(postgres.urlOf(name), { max })
  clients.push(sql)
  return sql
}

beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(async () => {
  for (const sql of clients) await sql.close()
  await postgres?.stop()
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

describe('the Blockstore contract', () => {
  describe('PostgreSQL', () => {
    let sql: SQL
    beforeAll(async () => {
      sql = await database('contract')
    })
    interfaceBlockstoreTests({
      async setup() {
        const space = await openPostgresBlockSpace(sql)
        await sql`TRUNCATE blocks`
        return space
      },
      teardown() {},
    })
  })

  describe('LevelDB', () => {
    interfaceBlockstoreTests<LevelBlockSpace>({
      setup() {
        const dir = tempDir('trellis-level-contract-')
        scratch.push(dir)
        return openLevelBlockSpace(dir)
      },
      teardown: (space) => space.close(),
    })
  })
})

const blockOf = async (text: string) => {
  const bytes = new TextEncoder().encode(text)
  return { bytes, cid: CID.createV1(raw.code, await sha256.digest(bytes)) }
}
const rows = async (sql: SQL) => Number((await sql`SELECT count(*) AS n FROM blocks`)[0].n)
const storedAt = async (space: BlockSpace, cid: CID) => {
  for await (const block of space.list()) if (block.key === space.keyOf(cid)) return block.storedAt
  return undefined
}

describe('the PostgreSQL block space', () => {
  let sql: SQL
  let clock = 0
  let space: BlockSpace
  beforeAll(async () => {
    sql = await database('own')
    space = await openPostgresBlockSpace(sql, { now: () => clock })
  })
  beforeEach(async () => {
    await sql`TRUNCATE blocks`
    clock = 1_000_000
  })

  test('instances opening at once make the table once, its blocks stored uncompressed', async () => {
    const name = 'opening'
    await database(name)
    const each = [client(name, 2), client(name, 2), client(name, 2), client(name, 2)]
    await Promise.all(each.map((sql) => openPostgresBlockSpace(sql)))
    const [column] = await each[0]!`SELECT attstorage FROM pg_attribute WHERE attrelid = 'blocks'::regclass AND attname = 'bytes'`
    expect(column.attstorage).toBe('e') // EXTERNAL: out of line, never compressed
    await openPostgresBlockSpace(each[0]!) // and again, once it is there
  })

  test('a put of a block already stored moves its time, so a collection with an earlier cutoff spares it', async () => {
    const { cid, bytes } = await blockOf('written twice')
    await space.put(cid, bytes)
    expect(await storedAt(space, cid)).toBe(1_000_000)
    clock = 2_000_000
    await space.put(cid, bytes)
    expect(await storedAt(space, cid)).toBe(2_000_000)
    expect(await space.removeUnreferenced([space.keyOf(cid)], 1_500_000)).toEqual({ removed: 0, bytes: 0 })
    expect(await space.has(cid)).toBe(true)
    expect(await rows(sql)).toBe(1)
  })

  test('a put that meets a collection deleting its block waits for it, then stores the block again', async () => {
    const { cid, bytes } = await blockOf('deleted under a put')
    await space.put(cid, bytes)
    clock = 2_000_000
    const collector = await sql.reserve()
    try {
      // The collection's statement, held open: the put must wait for its row.
      await collector`BEGIN`
      const deleted =
        await collector`DELETE FROM blocks WHERE mh = ANY(${sql.array([cid.multihash.bytes], 'BYTEA')}) AND stored_at < ${1_500_000}
          RETURNING size`
      expect(deleted.length).toBe(1)
      let put = false
      const putting = Promise.resolve(space.put(cid, bytes)).then(() => (put = true))
      await Bun.sleep(200)
      expect(put).toBe(false)
      await collector`COMMIT`
      await putting
    } finally {
      collector.release()
    }
    expect(await space.has(cid)).toBe(true)
    expect(await storedAt(space, cid)).toBe(2_000_000)
  })

  test('a collection that meets a put of its block waits for it, then spares the block', async () => {
    const { cid, bytes } = await blockOf('put under a collection')
    await space.put(cid, bytes)
    const importer = await sql.reserve()
    try {
      // The put's statement, held open: the collection must wait for the row, then see its new time.
      await importer`BEGIN`
      await importer`INSERT INTO blocks (mh, bytes, size, stored_at)
        VALUES (${cid.multihash.bytes}, ${bytes}, ${bytes.byteLength}, ${2_000_000})
        ON CONFLICT (mh) DO UPDATE SET stored_at = EXCLUDED.stored_at`
      let done = false
      const removing = space.removeUnreferenced([space.keyOf(cid)], 1_500_000).then((result) => ((done = true), result))
      await Bun.sleep(200)
      expect(done).toBe(false)
      await importer`COMMIT`
      expect(await removing).toEqual({ removed: 0, bytes: 0 })
    } finally {
      importer.release()
    }
    expect(await space.has(cid)).toBe(true)
  })

  test(
    'a collection removes what was written before its cutoff and spares the rest; a dry run counts ' + 'the same, removing nothing',
    async () => {
      const old = await Promise.all(['old 1', 'old 22', 'old 333'].map(blockOf))
      for (const { cid, bytes } of old) await space.put(cid, bytes)
      clock = 3_000_000
      const fresh = await Promise.all(['fresh 1', 'fresh 22'].map(blockOf))
      for (const { cid, bytes } of fresh) await space.put(cid, bytes)
      const keys = [...old, ...fresh].map(({ cid }) => space.keyOf(cid))
      const missing = space.keyOf((await blockOf('never stored')).cid)

      const counted = await space.removeUnreferenced([...keys, missing], 2_000_000, { dryRun: true })
      expect(counted).toEqual({ removed: 3, bytes: 5 + 6 + 7 })
      expect(await rows(sql)).toBe(5)
      expect(await space.removeUnreferenced([...keys, missing], 2_000_000)).toEqual(counted)
      for (const { cid } of old) expect(await space.has(cid)).toBe(false)
      for (const { cid } of fresh) expect(await space.has(cid)).toBe(true)
      // The cutoff is a time, never left out: this space has no holds to spare by instead.
      expect(space.holds).toBeUndefined()
      await expect(space.removeUnreferenced(keys, null)).rejects.toThrow('PostgreSQL knows when each block was written')
    },
  )

  test('the CIDv0 and CIDv1 of the same bytes are one block', async () => {
    const bytes = new TextEncoder().encode('one block, two names')
    const digest = await sha256.digest(bytes)
    const v0 = CID.createV0(digest)
    const v1 = CID.createV1(raw.code, digest)
    await space.put(v0, bytes)
    expect(space.keyOf(v0)).toBe(space.keyOf(v1))
    expect(await space.has(v1)).toBe(true)
    await space.put(v1, bytes)
    expect(await rows(sql)).toBe(1)
    const read: Uint8Array[] = []
    for await (const piece of space.get(v1)) read.push(piece)
    expect(read).toEqual([bytes])
    await space.delete(v1)
    expect(await space.has(v0)).toBe(false)
  })

  test('list() and getAll() read a store larger than a page, each block once', async () => {
    const blocks = await Promise.all(Array.from({ length: 2_345 }, (_, i) => blockOf(`block ${i}`)))
    for (let at = 0; at < blocks.length; at += 200)
      await Promise.all(blocks.slice(at, at + 200).map(({ cid, bytes }) => space.put(cid, bytes)))
    const listed = new Set<string>()
    for await (const block of space.list()) {
      listed.add(block.key)
      expect(block.storedAt).toBe(1_000_000)
      expect(space.keyOf(block.cid)).toBe(block.key)
    }
    expect(listed).toEqual(new Set(blocks.map(({ cid }) => space.keyOf(cid))))
    let all = 0
    for await (const { cid } of space.getAll()) {
      expect(listed.has(space.keyOf(cid))).toBe(true)
      all++
    }
    expect(all).toBe(blocks.length)
  })
})

describe('the content store on PostgreSQL', () => {
  const random = (size: number) => {
    const bytes = new Uint8Array(size)
    for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65_536)))
    return bytes
  }

  test('50 MiB in and out, whole and a range, under the same CID as on LevelDB', async () => {
    const sql = await database('large')
    const dataDir = tempDir('trellis-pg-content-')
    const levelDir = tempDir('trellis-level-content-')
    scratch.push(dataDir, levelDir)
    const size = 50 * 1024 * 1024
    const content = random(size)
    const store = await openSharedContent(await openPostgresBlockSpace(sql), { dataDir, gcGraceSeconds: 60 })
    const level = await openContent(levelDir)
    try {
      const stored = await store.put(content)
      expect(stored).toEqual(await level.put(content))
      expect(await store.size(stored.cid)).toBe(size)
      const whole = await concatChunks(store.read(stored.cid), size)
      expect(Buffer.compare(whole, content)).toBe(0)
      const range = { offset: 30 * 1024 * 1024 + 12_345, length: 1024 * 1024 }
      const part = await concatChunks(store.read(stored.cid, range), range.length)
      expect(Buffer.compare(part, content.subarray(range.offset, range.offset + range.length))).toBe(0)
      expect(await store.check(stored.cid)).toBeNull()
      expect(await rows(sql)).toBe(203) // 200 leaves of 256 KiB, two nodes below the root, the root
    } finally {
      await store.close()
      await level.close()
    }
  }, 120_000)

  test('a collection removes unnamed content older than the grace and spares what is named or newer', async () => {
    const sql = await database('collect')
    const dataDir = tempDir('trellis-pg-collect-')
    scratch.push(dataDir)
    // An hour's grace, which no pause of a loaded machine between the last put and the collection outlasts; the
    // first two puts are past it by their stamps moved two hours back, not by waiting.
    const store = await openSharedContent(await openPostgresBlockSpace(sql), { dataDir, gcGraceSeconds: 3600 })
    const progress = () => {}
    try {
      const named = await store.put(random(600_000)) // 3 leaves and a root
      const orphan = await store.put(random(100_000)) // one raw block
      await sql`UPDATE blocks SET stored_at = stored_at - ${2 * 3_600_000}`
      const fresh = await store.put(random(100_000))
      const dry = await store.collect(() => [named.cid], { dryRun: true, progress })
      expect(dry).toEqual({ kept: 4, spared: 1, removed: 1, removed_bytes: 100_000, dry_run: true })
      expect(await store.has(orphan.cid)).toBe(true)
      const done = await store.collect(() => [named.cid], { dryRun: false, progress })
      expect(done).toEqual({ ...dry, dry_run: false })
      expect(await store.has(orphan.cid)).toBe(false)
      expect(await store.has(fresh.cid)).toBe(true)
      expect(await store.check(named.cid)).toBeNull()
    } finally {
      await store.close()
    }
  })
})
