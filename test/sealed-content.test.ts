// Paid content is stored sealed (content/sealing.ts): its public CID is not the CID of its bytes, so it cannot
// confirm a guess of them, while the owner, a buyer (bought on a local chain), an access link and a content_url
// read the exact bytes, whole and by any Range, small items and large ones (served from the file cache). The key
// never leaves the database; a backup restores it; entries stored before sealing are served as they were.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync, statSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { createWalletClient, http } from 'viem'
import { wrapFetchWithPayment } from 'x402-fetch'
import { importer } from 'ipfs-unixfs-importer'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { MemoryBlockstore } from 'blockstore-core'
import { restoreTarget, startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { startChain, type Buyer, type TestChain } from '../dev/chain.ts'
import { concatChunks } from '../src/lib/chunks.ts'
import { openContent } from '../src/content/open.ts'

const SIGNAL = 'BUY: ETH-USD long, target 4200'
const LARGE = 5 * 1024 * 1024 + 123 // a body over 4 MB: stored while it arrives; served from a file
const PRICE = '10000'

let chain: TestChain
let server: TestServer
let owner: Wallet
let buyer: Buyer
let feedId: string
let large: Uint8Array
const scratch: string[] = []

/** The CID `ipfs add --cid-version 1` gives these bytes: what an attacker computes for a guess. */
async function plainCid(bytes: Uint8Array): Promise<string> {
  let last: { cid: { toString(): string } } | undefined
  const options = {
    cidVersion: 1 as const,
    rawLeaves: true,
    chunker: fixedSize({ chunkSize: 262_144 }),
    layout: balanced({ maxChildrenPerNode: 174 }),
  }
  for await (const entry of importer([{ content: bytes }], new MemoryBlockstore(), options)) last = entry
  return last!.cid.toString()
}

const paidEntry = (content: Uint8Array | string, mime = 'application/pdf') =>
  createEntry(server.url, owner, feedId, { content_base64: b64(content), mime_type: mime, is_free: false, price: { amount: PRICE } })
const contentPath = (entry: { id: string }) => `/v1/feeds/${feedId}/entries/${entry.id}/content`

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  owner = newWallet()
  feedId = (await createFeed(server.url, owner, { name: 'signals' })).id
  large = new Uint8Array(LARGE)
  for (let offset = 0; offset < LARGE; offset += 65_536) crypto.getRandomValues(large.subarray(offset, Math.min(LARGE, offset + 65_536)))
  buyer = await chain.newFundedBuyer(1_000_000n)
})

afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** Ranges that cross 256 KiB chunk and 16-byte cipher block boundaries, the first and last bytes, suffixes. */
const rangesFor = (size: number): Array<[string, number, number]> => [
  ['bytes=0-0', 0, 0],
  [`bytes=${size - 1}-${size - 1}`, size - 1, size - 1],
  ['bytes=-1', size - 1, size - 1],
  [`bytes=-${Math.min(size, 300_001)}`, Math.max(0, size - 300_001), size - 1],
  ['bytes=7-22', 7, 22],
  ...(size > 600_000
    ? ([
        ['bytes=262140-262160', 262_140, 262_160],
        ['bytes=262143-786433', 262_143, 786_433],
        [`bytes=1000001-${size - 2}`, 1_000_001, size - 2],
      ] as Array<[string, number, number]>)
    : []),
  [`bytes=${size - 10}-`, size - 10, size - 1],
]

/** GETs `url` whole, by every range, and by HEAD, with headers from `auth()` (fresh for each request). */
async function expectServes(url: string, bytes: Uint8Array, etag: string, auth: () => Promise<Record<string, string>> = async () => ({})) {
  const whole = await fetch(url, { headers: await auth() })
  expect(whole.status).toBe(200)
  expect(whole.headers.get('content-length')).toBe(String(bytes.byteLength))
  expect(whole.headers.get('etag')).toBe(`"${etag}"`)
  expect(Buffer.compare(new Uint8Array(await whole.arrayBuffer()), bytes)).toBe(0)
  for (const [range, start, end] of rangesFor(bytes.byteLength)) {
    const part = await fetch(url, { headers: { ...(await auth()), range } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${bytes.byteLength}`)
    expect(part.headers.get('content-length')).toBe(String(end - start + 1))
    expect(Buffer.compare(new Uint8Array(await part.arrayBuffer()), bytes.subarray(start, end + 1))).toBe(0)
  }
  const head = await fetch(url, { method: 'HEAD', headers: await auth() })
  expect(head.status).toBe(200)
  expect(head.headers.get('content-length')).toBe(String(bytes.byteLength))
}

describe('the public CID of paid content', () => {
  test('is not the CID of its bytes: a guess cannot be confirmed; the same bytes free keep the CID of ipfs add', async () => {
    const bytes = new TextEncoder().encode(SIGNAL)
    const guess = await plainCid(bytes)
    const paid = await paidEntry(SIGNAL, 'text/plain')
    expect(paid.cid).not.toBe(guess)
    // Listed, fetched: the same CID everywhere, never the guess.
    const listed = (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries`)).body.data.find((e: any) => e.id === paid.id)
    expect(listed.cid).toBe(paid.cid)
    expect((await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${paid.id}`, { wallet: owner })).body.cid).toBe(paid.cid)
    // The same bytes paid again: another key, another CID (no dedup that would link the two).
    expect((await paidEntry(SIGNAL, 'text/plain')).cid).not.toBe(paid.cid)
    // Free: the CID of ipfs add, as before; the paid entry's stays apart from it.
    const otherFeed = (await createFeed(server.url, owner, { name: 'free' })).id
    const free = await createEntry(server.url, owner, otherFeed, { content_base64: b64(SIGNAL), mime_type: 'text/plain' })
    expect(free.cid).toBe(guess)
    expect(await (await fetch(`${server.url}/v1/feeds/${otherFeed}/entries/${free.id}/content`)).text()).toBe(SIGNAL)
    const read = await fetch(`${server.url}${contentPath(paid)}`, { headers: await authHeaders(server.url, owner) })
    expect(read.headers.get('etag')).toBe(`"${paid.cid}"`)
    expect(await read.text()).toBe(SIGNAL)
  })

  test('large content (stored while it arrives): sealed when paid; stored in the clear under the ipfs add CID when free', async () => {
    const guess = await plainCid(large)
    const paid = await paidEntry(large, 'video/mp4')
    expect(paid.cid).not.toBe(guess)
    const free = await createEntry(server.url, owner, feedId, { content_base64: b64(large), mime_type: 'video/mp4' })
    expect(free.cid).toBe(guess)
    await expectServes(`${server.url}${contentPath(free)}`, large, free.cid)
  })
})

describe('paid content read by everyone entitled', () => {
  for (const [name, size] of [
    ['small', 70_001],
    ['large', LARGE],
  ] as const) {
    test(`${name} (${size} bytes): owner, buyer, access link and content_url read the exact bytes, whole, by Range and HEAD`, async () => {
      const bytes = size === LARGE ? large : crypto.getRandomValues(new Uint8Array(size))
      const entry = await paidEntry(bytes, 'audio/mpeg')
      const url = `${server.url}${contentPath(entry)}`
      expect((await fetch(url)).status).toBe(402)

      await expectServes(url, bytes, entry.cid, () => authHeaders(server.url, owner))

      const wallet = createWalletClient({ account: buyer, chain: chain.chain, transport: http(chain.rpcUrl) })
      const bought = await wrapFetchWithPayment(fetch, wallet as never)(url)
      expect(bought.status).toBe(200)
      expect(Buffer.compare(new Uint8Array(await bought.arrayBuffer()), bytes)).toBe(0)
      await expectServes(url, bytes, entry.cid, () => authHeaders(server.url, buyer))

      const link = await call(server.url, 'POST', `/v1/feeds/${feedId}/entries/${entry.id}/access-link`, { wallet: owner, body: {} })
      expect(link.status).toBe(201)
      await expectServes(link.body.access_url, bytes, entry.cid)

      const got = await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${entry.id}`, { wallet: owner })
      await expectServes(got.body.content_url, bytes, entry.cid)
    })
  }

  test("the large item's cached file is named apart from its public CID, and no temporary file is left", async () => {
    const names = readdirSync(join(server.dataDir, 'cache', 'content'))
    expect(names.some((name) => name.endsWith('.plain'))).toBe(true)
    expect(names.filter((name) => name.includes('.tmp'))).toEqual([])
  })
})

describe('the content store', () => {
  test('opens any range of a sealed item read from its blocks (no cache): chunk and cipher block boundaries', async () => {
    const dir = tempDir('trellis-sealed-store-')
    scratch.push(dir)
    const content = await openContent(dir)
    try {
      const stored = await content.put([large.slice(0, 1_000_000), large.slice(1_000_000)], { sealed: true })
      expect(stored.key?.byteLength).toBe(32)
      expect(stored.cid).not.toBe(await plainCid(large))
      const sealed = await concatChunks(content.read(stored.cid), LARGE)
      expect(Buffer.compare(sealed, large)).not.toBe(0) // the blocks hold no plaintext
      expect(Buffer.from(sealed).includes(Buffer.from(large.subarray(4096, 4160)))).toBe(false)
      for (const [offset, length] of [
        [0, LARGE],
        [1, 15],
        [15, 2],
        [16, 16],
        [262_143, 3],
        [262_100, 600_000],
        [LARGE - 17, 17],
        [LARGE - 1, 1],
        [3_333_333, 1_234_567],
      ]) {
        const read = await concatChunks(content.read(stored.cid, { offset, length }, stored.key), length)
        expect(Buffer.compare(read, large.subarray(offset, offset + length))).toBe(0)
      }
    } finally {
      await content.close()
    }
  })

  test('an upload written to a file as it arrives is stored once its price is known: sealed or in the clear; the file goes', async () => {
    const dir = tempDir('trellis-upload-file-')
    scratch.push(dir)
    const content = await openContent(dir)
    const uploads = join(dir, 'cache', 'uploads')
    const arrive = async () => {
      const writer = content.writer()
      for (let at = 0; at < LARGE; at += 700_001) {
        writer.push(large.slice(at, at + 700_001))
        await writer.ready()
      }
      const arrived = await writer.end()
      expect(arrived.size).toBe(LARGE)
      expect(readdirSync(uploads)).toHaveLength(1)
      return arrived
    }
    try {
      const free = await content.put((await arrive()).pieces())
      expect(free).toEqual({ cid: await plainCid(large), size: LARGE })
      expect(readdirSync(uploads)).toEqual([])
      const paid = await content.put((await arrive()).pieces(), { sealed: true })
      expect(paid.cid).not.toBe(free.cid)
      expect(Buffer.compare(await concatChunks(content.read(paid.cid, undefined, paid.key), LARGE), large)).toBe(0)
      expect(readdirSync(uploads)).toEqual([])
      ;(await arrive()).discard() // a refused request: never stored
      expect(readdirSync(uploads)).toEqual([])
      const gone = content.writer()
      gone.push(large.slice(0, 1000))
      gone.abort(new Error('the client went away'))
      expect(
        await gone.end().then(
          () => 'ended',
          (error: Error) => error.message,
        ),
      ).toBe('the client went away')
      expect(readdirSync(uploads)).toEqual([])
    } finally {
      await content.close()
    }
    // What an interrupted start left is removed at the next.
    await Bun.write(join(uploads, 'left-by-a-crash'), 'x')
    await (await openContent(dir)).close()
    expect(readdirSync(uploads)).toEqual([])
  })
})

describe('the large-item file cache', () => {
  test('a truncated file (as a power loss can leave) is not served: it is written again from the store', async () => {
    const paid = await paidEntry(large, 'video/mp4')
    const free = await createEntry(server.url, owner, feedId, { content_base64: b64(large.slice().reverse()), mime_type: 'video/mp4' })
    const reads = [
      {
        url: () => `${server.url}${contentPath(paid)}`,
        bytes: large,
        file: `${paid.cid}.plain`,
        auth: () => authHeaders(server.url, owner),
      },
      { url: () => `${server.url}${contentPath(free)}`, bytes: large.slice().reverse(), file: free.cid, auth: async () => ({}) },
    ]
    const cacheDir = join(server.dataDir, 'cache', 'content')
    for (const read of reads) expect((await fetch(read.url(), { headers: await read.auth() })).status).toBe(200)
    await server.stop()
    for (const read of reads) truncateSync(join(cacheDir, read.file), 1024 * 1024)
    await server.restart()
    for (const read of reads) {
      const response = await fetch(read.url(), { headers: await read.auth() })
      expect(response.headers.get('content-length')).toBe(String(LARGE))
      expect(Buffer.compare(new Uint8Array(await response.arrayBuffer()), read.bytes)).toBe(0)
      expect(statSync(join(cacheDir, read.file)).size).toBe(LARGE)
      const tail = await fetch(read.url(), { headers: { ...(await read.auth()), range: 'bytes=-5' } })
      expect(Buffer.compare(new Uint8Array(await tail.arrayBuffer()), read.bytes.subarray(LARGE - 5))).toBe(0)
    }
  })
})

describe('the key', () => {
  test('appears in no answer: created, listed, fetched, recent entries, access links', async () => {
    const entry = await paidEntry(SIGNAL, 'text/plain')
    const key = (await withRecords(
      server,
      (db) => db.get<{ content_key: Uint8Array }>('SELECT content_key FROM entries WHERE id = ?', [entry.id]),
      { readonly: true },
    ))!.content_key
    expect(key.byteLength).toBe(32)
    const link = await call(server.url, 'POST', `/v1/feeds/${feedId}/entries/${entry.id}/access-link`, { wallet: owner, body: {} })
    const answers = [
      JSON.stringify(entry),
      link.text,
      (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries?page_size=100`)).text,
      (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${entry.id}`, { wallet: owner })).text,
      (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${entry.id}`)).text, // the 402
      (await call(server.url, 'GET', `/v1/feeds/${feedId}/entries/${entry.id}/access-links`, { wallet: owner })).text,
      (await call(server.url, 'GET', '/v1/leaderboards/recent-entries?page_size=100')).text,
      (await call(server.url, 'GET', `/v1/feeds/${feedId}`)).text,
    ]
    const spellings = [
      Buffer.from(key).toString('hex'),
      Buffer.from(key).toString('base64'),
      Buffer.from(key).toString('base64url'),
      'content_key',
    ]
    for (const answer of answers) for (const spelling of spellings) expect(answer.toLowerCase()).not.toContain(spelling.toLowerCase())
  })
})

describe('backup, restore, verify and gc', () => {
  test('a restored server serves paid content opened; verify and gc keep it whole', async () => {
    const small = crypto.getRandomValues(new Uint8Array(3_000))
    const entries = [await paidEntry(small), await paidEntry(large, 'video/mp4')]
    const dir = tempDir('trellis-sealed-backup-')
    scratch.push(dir)
    expect((await trellis(['backup', join(dir, 'backup')], server.dataDir)).code).toBe(0)
    expect((await trellis(['restore', join(dir, 'backup')], await restoreTarget(join(dir, 'data')))).code).toBe(0)
    const other = await startTestServer(chain.env, { dataDir: join(dir, 'data') })
    try {
      for (const [entry, bytes] of [
        [entries[0], small],
        [entries[1], large],
      ] as const) {
        const read = await fetch(`${other.url}${contentPath(entry)}`, { headers: await authHeaders(other.url, owner) })
        expect(read.status).toBe(200)
        expect(Buffer.compare(new Uint8Array(await read.arrayBuffer()), bytes)).toBe(0)
      }
    } finally {
      await other.stop()
    }
    const checked = await trellis(['verify'], join(dir, 'data'))
    expect(checked.json).toMatchObject({ ok: true, items: { problems: [] } })
    expect((await trellis(['gc'], server.dataDir)).code).toBe(0)
    const after = await fetch(`${server.url}${contentPath(entries[1])}`, {
      headers: { ...(await authHeaders(server.url, owner)), range: 'bytes=-1000' },
    })
    expect(Buffer.compare(new Uint8Array(await after.arrayBuffer()), large.subarray(LARGE - 1000))).toBe(0)
  }, 90_000)
})

describe('entries stored before sealing', () => {
  test('a paid entry with no key (content in the clear) is served as before', async () => {
    const bytes = new TextEncoder().encode('an old paid entry, stored in the clear before sealing')
    const entry = await createEntry(server.url, owner, feedId, { content_base64: b64(bytes), mime_type: 'text/plain' })
    await server.stop()
    // As a paid row stored before.
    await withRecords(server, (db) => db.run('UPDATE entries SET is_free = 0, price = 5000 WHERE id = ?', [entry.id]))
    await server.restart()
    expect((await fetch(`${server.url}${contentPath(entry)}`)).status).toBe(402)
    await expectServes(`${server.url}${contentPath(entry)}`, bytes, entry.cid, () => authHeaders(server.url, owner))
  })
})
