// The S3 block space (src/store/postgres/blocks/bucket-space.ts) on s3rver with its index in PostgreSQL: the Blockstore contract
// (interface-blockstore-tests), a put and a collection crossing on one block, the grace, and a server with
// TRELLIS_CONTENT_URL=s3://… serving the largest entry the interface takes (50 MB of base64) whole and by Range,
// collected by `trellis gc` after its grace only when no record names it. PostgreSQL: the suite's cluster, or one of
// its own, so both passes run it.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, mock, test } from 'bun:test'
import { S3Client, SQL } from 'bun'
import { randomBytes } from 'node:crypto'
// @ts-expect-error chai 4 ships no types (see block-space-postgres.test.ts)
import chai from 'chai'
// @ts-expect-error as above
import chaiAsPromised from 'chai-as-promised'
import chaiParentheses from 'chai-parentheses'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { emptyDatabase, postgresForTest } from '../dev/test-database.ts'
import { S3RVER_CREDENTIALS, startS3, type S3Server } from '../dev/s3.ts'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { openS3BlockSpace } from '../src/store/postgres/blocks/bucket-space.ts'
import type { BlockSpace } from '../src/content/store.ts'

chai.use(chaiAsPromised)
chai.use(chaiParentheses)
mock.module('aegir/chai', () => ({ chai, expect: chai.expect, assert: chai.assert }))
Object.assign(globalThis, { describe, it, beforeEach, afterEach })
const { interfaceBlockstoreTests } = await import('interface-blockstore-tests')

let postgres: Awaited<ReturnType<typeof postgresForTest>>
let s3: S3Server
let bucket: S3Client
const clients: SQL[] = []
const servers: TestServer[] = []

async function database(max = 10): Promise<{ url: string; sql: SQL }> {
  const url = await emptyDatabase(postgres.adminUrl)
  const sql = new SQL(url, { max })
  clients.push(sql)
  return { url, sql }
}

beforeAll(async () => {
  postgres = await postgresForTest()
  s3 = await startS3()
  bucket = new S3Client({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    accessKeyId: S3RVER_CREDENTIALS.S3_ACCESS_KEY_ID,
    secretAccessKey: S3RVER_CREDENTIALS.S3_SECRET_ACCESS_KEY,
    region: 'us-east-1',
  })
})
afterAll(async () => {
  for (const server of servers) await server.dispose()
  for (const sql of clients) await sql.close()
  await s3?.stop()
  await postgres?.stop()
})

describe('the Blockstore contract, S3', () => {
  let sql: SQL
  let round = 0
  beforeAll(async () => {
    sql = (await database()).sql
  })
  interfaceBlockstoreTests({
    async setup() {
      // A prefix of its own per test: the bucket starts empty for each, as the index does.
      const space = await openS3BlockSpace(sql, { client: bucket, prefix: `contract-${++round}/` })
      await sql`TRUNCATE block_index`
      return space
    },
    teardown() {},
  })
})

const blockOf = async (text: string) => {
  const bytes = new TextEncoder().encode(text)
  return { bytes, cid: CID.createV1(raw.code, await sha256.digest(bytes)) }
}

describe('the S3 block space', () => {
  let sql: SQL
  let clock = 0
  let space: BlockSpace
  beforeAll(async () => {
    sql = (await database()).sql
    space = await openS3BlockSpace(sql, { client: bucket, prefix: 'own/' }, { now: () => clock })
  })
  beforeEach(async () => {
    clock = 1_000_000
  })

  test('instances opening at once make the index once; its objects are named by multihash under the prefix', async () => {
    const { sql: shared } = await database(2)
    await Promise.all(Array.from({ length: 4 }, () => openS3BlockSpace(shared, { client: bucket, prefix: 'opening/' })))
    const { cid, bytes } = await blockOf('named')
    await space.put(cid, bytes)
    expect(await bucket.file(`own/${space.keyOf(cid)}`).text()).toBe('named')
  })

  test(
    'a collection removes what was written before its cutoff (index row and object) and spares the ' + 'rest; a dry run removes nothing',
    async () => {
      const old = await Promise.all(['old 1', 'old 22', 'old 333'].map(blockOf))
      for (const { cid, bytes } of old) await space.put(cid, bytes)
      clock = 3_000_000
      const fresh = await Promise.all(['fresh 1', 'fresh 22'].map(blockOf))
      for (const { cid, bytes } of fresh) await space.put(cid, bytes)
      const keys = [...old, ...fresh].map(({ cid }) => space.keyOf(cid))
      const counted = await space.removeUnreferenced(keys, 2_000_000, { dryRun: true })
      expect(counted).toEqual({ removed: 3, bytes: 5 + 6 + 7 })
      for (const { cid } of old) expect(await space.has(cid)).toBe(true)
      expect(await space.removeUnreferenced(keys, 2_000_000)).toEqual(counted)
      for (const { cid } of old) expect(await space.has(cid)).toBe(false)
      for (const { cid } of fresh) expect(await space.has(cid)).toBe(true)
      await expect(space.removeUnreferenced(keys, null)).rejects.toThrow('the S3 index knows when each block was written')
    },
  )

  test('a put that meets a collection deleting its block waits for it, then writes the block again', async () => {
    const { cid, bytes } = await blockOf('deleted under a put')
    await space.put(cid, bytes)
    clock = 2_000_000
    const collector = await sql.reserve()
    try {
      // The collection's transaction, held open after its delete of row and object: the put must wait for the row.
      await collector`BEGIN`
      expect(
        (await collector`DELETE FROM block_index WHERE mh = ${cid.multihash.bytes} AND stored_at < ${1_500_000} RETURNING size`).length,
      ).toBe(1)
      await bucket.delete(`own/${space.keyOf(cid)}`)
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
    const [row] = await sql`SELECT stored_at FROM block_index WHERE mh = ${cid.multihash.bytes}`
    expect(Number(row.stored_at)).toBe(2_000_000)
  })

  test('a block indexed whose object was never written (a put cut short) is not there, and is collected', async () => {
    const { cid } = await blockOf('indexed only')
    await sql`INSERT INTO block_index (mh, size, stored_at) VALUES (${cid.multihash.bytes}, 12, 1)`
    expect(await space.has(cid)).toBe(false)
    expect(await space.removeUnreferenced([space.keyOf(cid)], 2)).toEqual({ removed: 1, bytes: 12 })
  })
})

describe('a server with content in S3', () => {
  test(
    'an entry of 50 MB in base64 (37 MiB): whole and by Range, on a second instance too; gc spares ' +
      'it, and an orphan within the grace, and takes the orphan after',
    async () => {
      const { url, sql } = await database()
      const env = { TRELLIS_DATABASE_URL: url, ...s3.env('served') }
      const a = await startTestServer(env)
      const b = await startTestServer(env)
      servers.push(a, b)
      const owner = newWallet()
      const feed = await createFeed(a.url, owner, { name: 'big media' })
      const bytes = randomBytes(37 * 1024 * 1024 + 123) // the interface's limit is 50 MB of base64
      const entry = await createEntry(a.url, owner, feed.id, {
        content_base64: b64(bytes),
        mime_type: 'video/mp4',
        title: 'fifty megabytes',
      })
      expect(Number((await sql`SELECT count(*) AS n FROM block_index`)[0].n)).toBeGreaterThan(140) // 256 KiB blocks
      expect(await sql`SELECT to_regclass('blocks') IS NULL AS none`).toEqual([{ none: true }]) // not in the database
      const content = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
      const ranged = await fetch(`${b.url}${content}`, { headers: { range: 'bytes=21000000-28999999' } })
      expect(ranged.status).toBe(206)
      expect(ranged.headers.get('content-range')).toBe(`bytes 21000000-28999999/${bytes.length}`)
      expect(Buffer.compare(Buffer.from(await ranged.arrayBuffer()), bytes.subarray(21_000_000, 29_000_000))).toBe(0)
      const whole = await fetch(`${b.url}${content}`)
      expect(Buffer.compare(Buffer.from(await whole.arrayBuffer()), bytes)).toBe(0)

      // An orphan: a block written straight to the bucket and index, which no record names.
      const orphan = await blockOf('nobody names me')
      const space = await openS3BlockSpace(sql, { client: bucket, prefix: 'served/' })
      await space.put(orphan.cid, orphan.bytes)
      // An hour's grace, which no pause of a loaded machine between the put and the gc outlasts; the hour is then
      // passed by stamping every block two hours earlier, not by waiting for it (the entry's too: kept for its name).
      const command = tempDir('trellis-s3-gc-')
      const gc = () => trellis(['gc', '--database-url', url], command, { TRELLIS_GC_GRACE_S: '3600', ...s3.env('served') })
      const fresh = await gc()
      expect(fresh.code, fresh.stderr).toBe(0)
      expect(fresh.json).toMatchObject({ spared: 1, removed: 0 })
      expect(await space.has(orphan.cid)).toBe(true)
      await sql`UPDATE block_index SET stored_at = stored_at - ${2 * 3_600_000}`
      const collected = await gc()
      expect(collected.code, collected.stderr).toBe(0)
      expect(collected.json).toMatchObject({ spared: 0, removed: 1, dry_run: false })
      expect(await space.has(orphan.cid)).toBe(false)
      const again = await fetch(`${a.url}${content}`, { headers: { range: 'bytes=0-99' } })
      expect(Buffer.compare(Buffer.from(await again.arrayBuffer()), bytes.subarray(0, 100))).toBe(0)
    },
  )

  test('a bucket that cannot be reached stops the start with one line naming it', async () => {
    const { url } = await database()
    const refused = await trellis(['verify', '--database-url', url], tempDir('trellis-s3-bad-'), {
      ...S3RVER_CREDENTIALS,
      TRELLIS_CONTENT_URL: 's3://trellis/x?endpoint=http%3A%2F%2F127.0.0.1%3A9&region=us-east-1',
    })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('the S3 bucket at s3://trellis/x')
  })
})
