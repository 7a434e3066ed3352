// The private content store: an embedded Helia node with no networking, over LevelDB on disk.
import { join } from 'node:path'
import { createHeliaLight } from 'helia'
import { unixfs } from '@helia/unixfs'
import { LevelBlockstore } from 'blockstore-level'
import { LevelDatastore } from 'datastore-level'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { equals } from 'multiformats/bytes'
import { car } from '@helia/car'
import { CarBlockIterator } from '@ipld/car'
import { fileCache } from './file-cache.ts'
import { bytesCache, CACHE_ITEM_MAX } from './bytes-cache.ts'
import { newContentKey, opened, sealer, type ContentKey } from './sealing.ts'
import { collectGarbage, heldBlocks, type Collected, type Hold } from './garbage.ts'
import { linksOf, readBlock } from './blocks.ts'
import { sharedRuns } from '../lib/shared-runs.ts'
import { uploadSpool, type ContentWriter } from './spool.ts'

export type { ArrivedContent, ContentWriter } from './spool.ts'

// The options of `ipfs add --cid-version 1`, spelled out so the CID never drifts with library defaults.
const IMPORT_OPTIONS = {
  cidVersion: 1 as const,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize: 262_144 }),
  layout: balanced({ maxChildrenPerNode: 174 }),
}

export interface StoredContent {
  cid: string
  size: number
  /** Set when the item was stored sealed (see sealing.ts): `cid` names the sealed bytes, opened with this key. */
  key?: ContentKey
}

/** Sealed: encrypted under a new key of its own, so the CID is not that of the content (paid content). */
export interface PutOptions { sealed?: boolean }

export interface ContentStore {
  /** Stores bytes, whole, in pieces or as they come (a large upload is read back from its file); the CID is the same. */
  put(bytes: Uint8Array | Uint8Array[] | AsyncIterable<Uint8Array>, options?: PutOptions): Promise<StoredContent>
  /** A large upload's content, written to a file as it arrives, to be put() once its price is known (spool.ts). */
  writer(): ContentWriter
  has(cid: string): Promise<boolean>
  /** Bytes of small items held in memory (bounded; for /metrics). */
  cachedBytes(): number
  size(cid: string): Promise<number | null>
  /** The item's content (opened with `key` when it is sealed), or a range of it. */
  read(cid: string, range?: { offset: number; length: number }, key?: ContentKey | null): AsyncIterable<Uint8Array>
  /**
   * A response body for the item's content or a range of it (`size` is the item's): bytes for a small item, a file
   * for a large one, so N downloads of a large item cost no N copies of it in memory.
   */
  body(cid: string, size: number, range?: { offset: number; length: number }, key?: ContentKey | null): Promise<Uint8Array<ArrayBuffer> | Blob>
  /** A CAR file (v1) of these items and every block under them, each block once; `onBlock` counts them. */
  exportCar(roots: string[], onBlock?: () => void): AsyncIterable<Uint8Array>
  /** Stores every block of a CAR file (each checked against its CID); its roots and how many blocks it held. */
  importCar(source: AsyncIterable<Uint8Array>, onBlock?: () => void): Promise<{ roots: string[]; blocks: number }>
  /** Every block under `cid` is present and hashes to its CID: null, or what is wrong. */
  check(cid: string): Promise<string | null>
  /** Removes the blocks of items no record names (`named` lists those that are), sparing imports under way. */
  collect(named: () => string[] | Promise<string[]>, options: { dryRun: boolean; progress: (what: string, done: number, total?: number) => void }): Promise<Collected>
  close(): Promise<void>
}

export function parseCid(text: string): CID | null {
  try {
    return CID.parse(text)
  } catch {
    return null
  }
}

const SYNC_KEY = '/trellis-sync-barrier'

/** The bytes are the block this CID names (every block we store is SHA-256 addressed). */
const hashesTo = async (cid: CID, bytes: Uint8Array) => cid.multihash.code === sha256.code && equals((await sha256.digest(bytes)).bytes, cid.multihash.bytes)

/**
 * Yields the pieces (sealed by `seal`, when given) and lets go of each once taken, so an import holds little more
 * than what is still to come.
 */
async function* consume(pieces: Uint8Array[], seal?: (piece: Uint8Array) => Uint8Array) {
  while (pieces.length > 0) yield seal ? seal(pieces.shift()!) : pieces.shift()!
}

/** A large item is read whole this much at a time (a few of its 256 KiB chunks). */
const READ_WINDOW_BYTES = 2 * 1024 * 1024

/** The first `length` bytes of a stream, in one array. */
export async function collect(source: AsyncIterable<Uint8Array>, length: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(length)
  let offset = 0
  for await (const chunk of source) {
    out.set(chunk.subarray(0, length - offset), offset)
    offset += chunk.byteLength
    if (offset >= length) break
  }
  return out
}

/**
 * LevelDB's in-memory table for blocks. Its 4 MiB default turns one large upload into a dozen level-0 files, and
 * uploads in a row into compaction stalls (docs/performance.md, "LevelDB write buffer").
 */
const BLOCK_WRITE_BUFFER_BYTES = 16 * 1024 * 1024

/** Large items served as files are kept in <data dir>/cache/content, up to this many bytes (then oldest first). */
const FILE_CACHE_BYTES = 1024 * 1024 * 1024

export async function openContent(dataDir: string, options: { fileCacheBytes?: number } = {}): Promise<ContentStore> {
  const blockstore = new LevelBlockstore(join(dataDir, 'blocks'), { writeBufferSize: BLOCK_WRITE_BUFFER_BYTES })
  const datastore = new LevelDatastore(join(dataDir, 'datastore'))
  await blockstore.open()
  await datastore.open()
  const helia = await createHeliaLight({ blockstore, datastore })
  await helia.start()
  const fs = unixfs(helia)
  // An import notes each block before Helia stores it, so a collection running meanwhile spares it (garbage.ts).
  const held = heldBlocks()
  const importer = (hold: Hold) => unixfs({
    blockstore: {
      get: (...args: Parameters<typeof helia.blockstore.get>) => helia.blockstore.get(...args),
      has: (...args: Parameters<typeof helia.blockstore.has>) => helia.blockstore.has(...args),
      put: (...args: Parameters<typeof helia.blockstore.put>) => (hold.note(args[0]), helia.blockstore.put(...args)),
    },
  })
  const cache = bytesCache()
  const sizes = new Map<string, number>()
  const files = fileCache(join(dataDir, 'cache', 'content'), options.fileCacheBytes ?? FILE_CACHE_BYTES)
  let collecting = false // one collection at a time: a second would count the first one's removals again
  // LevelDB writes its log without fsync; one synced write flushes everything before it, so the blocks are on disk
  // before the entry that names them is committed. Concurrent uploads share one such write.
  const flushBlocks = sharedRuns(() => blockstore.db.put(SYNC_KEY, new Uint8Array(0), { sync: true }))

  /** Stores an item's bytes, whole or as they come, with the blocks on disk when it resolves: its CID. */
  async function importItem(source: Uint8Array | AsyncIterable<Uint8Array>): Promise<string> {
    const hold = held.begin()
    try {
      const add = importer(hold)
      const cid = await (source instanceof Uint8Array ? add.addBytes(source, IMPORT_OPTIONS) : add.addByteStream(source, IMPORT_OPTIONS))
      await flushBlocks()
      return cid.toString()
    } finally {
      hold.end()
    }
  }

  /** A large item whole, a window at a time: the exporter reads what is asked as fast as it can, whoever waits. */
  async function* inWindows(cid: CID, size: number): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < size; offset += READ_WINDOW_BYTES) yield* fs.cat(cid, { offset, length: Math.min(READ_WINDOW_BYTES, size - offset) })
  }

  /** The stored bytes of an item (sealed ones as stored), or a range of them; small whole items are cached. */
  function readStored(text: string, range?: { offset: number; length: number }): AsyncIterable<Uint8Array> {
    const cached = cache.get(text)
    if (cached) return consume([range ? cached.subarray(range.offset, range.offset + range.length) : cached])
    const cid = CID.parse(text)
    if (range) return fs.cat(cid, { offset: range.offset, length: range.length })
    const size = sizes.get(text)
    if (size !== undefined && size > CACHE_ITEM_MAX) return inWindows(cid, size)
    if (size === undefined) return fs.cat(cid) // not known here: not worth a stat of its own
    // A whole small item: read it once, keep it.
    return (async function* () {
      const chunks: Uint8Array[] = []
      for await (const chunk of fs.cat(cid)) chunks.push(chunk)
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      cache.set(text, bytes)
      yield bytes
    })()
  }

  const spool = uploadSpool(join(dataDir, 'cache', 'uploads'))

  const store: ContentStore = {
    async put(input, options = {}) {
      const key = options.sealed ? newContentKey() : undefined
      const seal = key && sealer(key)
      if (!(input instanceof Uint8Array) && !Array.isArray(input)) {
        let size = 0
        const cid = await importItem((async function* () {
          for await (const piece of input) {
            size += piece.byteLength
            yield seal ? seal(piece) : piece
          }
        })())
        sizes.set(cid, size)
        return key ? { cid, size, key } : { cid, size }
      }
      const size = Array.isArray(input) ? input.reduce((sum, piece) => sum + piece.byteLength, 0) : input.byteLength
      // A small item is joined (it is cached whole, as stored); a large one is imported piece by piece, never joined.
      const joined = !Array.isArray(input) ? input : size <= CACHE_ITEM_MAX ? (input.length === 1 ? input[0]! : Buffer.concat(input, size)) : null
      const bytes = joined && seal ? seal(joined) : joined
      const cid = await importItem(bytes ?? consume(input as Uint8Array[], seal))
      sizes.set(cid, size)
      if (bytes) cache.set(cid, bytes)
      return key ? { cid, size, key } : { cid, size }
    },
    writer: () => spool.writer(),
    cachedBytes: () => cache.bytes,
    async has(text) {
      const cid = parseCid(text)
      return cid !== null && (await blockstore.has(cid))
    },
    async size(text) {
      const known = sizes.get(text)
      if (known !== undefined) return known
      const cid = parseCid(text)
      if (cid === null || !(await blockstore.has(cid))) return null
      const size = Number((await fs.stat(cid)).size)
      if (sizes.size > 100_000) sizes.clear()
      sizes.set(text, size)
      return size
    },
    read(text, range, key) {
      const stored = readStored(text, range)
      return key ? opened(key, stored, range?.offset ?? 0) : stored
    },
    async body(text, size, range, key) {
      if (size <= CACHE_ITEM_MAX) return collect(store.read(text, range, key), range?.length ?? size)
      // A sealed item's file holds its opened content: the cache is local (mode 0700), the CID stays what is public.
      const name = key ? `${text}.plain` : text
      const file = Bun.file(await files.path(name, size, () => store.read(text, undefined, key)))
      return range ? file.slice(range.offset, range.offset + range.length) : file
    },
    exportCar(roots, onBlock) {
      const seen = new Set<string>()
      const key = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
      const blockFilter = {
        has: (bytes: Uint8Array) => seen.has(key(bytes)),
        add: (bytes: Uint8Array) => void (seen.add(key(bytes)), onBlock?.()),
      }
      return car(helia).export(roots.map((root) => CID.parse(root)), { offline: true, blockFilter: blockFilter as never })
    },
    async importCar(source, onBlock) {
      const reader = await CarBlockIterator.fromIterable(source)
      let blocks = 0
      const hold = held.begin()
      const checked = async function* () {
        for await (const { cid, bytes } of reader) {
          if (!(await hashesTo(cid, bytes))) {
            throw new Error(`the CAR file holds a block that does not match its CID ${cid}`)
          }
          blocks++
          onBlock?.()
          hold.note(cid)
          yield { cid, bytes }
        }
      }
      try {
        await car(helia).import({ blocks: checked })
        await flushBlocks()
      } finally {
        hold.end()
      }
      return { roots: (await reader.getRoots()).map(String), blocks }
    },
    async check(text) {
      const root = parseCid(text)
      if (root === null) return 'not a CID'
      const pending = [root]
      while (pending.length > 0) {
        const cid = pending.pop()!
        if (!(await blockstore.has(cid))) return `block ${cid} is missing`
        const bytes = await readBlock(blockstore, cid)
        if (!(await hashesTo(cid, bytes))) return `block ${cid} does not hash to its CID`
        pending.push(...linksOf(cid, bytes))
      }
      return null
    },
    async collect(named, { dryRun, progress }) {
      if (collecting) throw new Error('a collection is already running')
      collecting = true
      try {
        return await collectGarbage({ store: blockstore, locked: helia.blockstore, held, named, dryRun, progress, skipKey: (key) => key === SYNC_KEY })
      } finally {
        collecting = false
      }
    },
    async close() {
      await helia.stop()
      await blockstore.close()
      await datastore.close()
    },
  }
  return store
}
