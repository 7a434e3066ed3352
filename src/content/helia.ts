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
import { collectGarbage, heldBlocks, type Collected, type Hold } from './garbage.ts'
import { linksOf, readBlock } from './blocks.ts'
import { sharedRuns } from '../lib/shared-runs.ts'
import { pieceQueue } from '../lib/piece-queue.ts'

// The options of `ipfs add --cid-version 1`, spelled out so the CID never drifts with library defaults.
const IMPORT_OPTIONS = {
  cidVersion: 1 as const,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize: 262_144 }),
  layout: balanced({ maxChildrenPerNode: 174 }),
}

export interface StoredContent { cid: string; size: number }

/** An item stored while it arrives: the import takes pieces as they come, so they are not all held at once. */
export interface ContentWriter {
  /** The next piece, taken as is (the caller must not reuse it). */
  push(piece: Uint8Array): void
  /** Resolves once the import has room for more: await it between pushes to bound what waits in memory. */
  ready(): Promise<void> | undefined
  /** No more pieces: resolves once every block is on disk. */
  end(): Promise<StoredContent>
  /** Gives up: the blocks written so far stay, unreferenced, until collect() (`trellis gc`) removes them. */
  abort(reason: Error): void
}

export interface ContentStore {
  /** Stores bytes, whole or in pieces (a large upload arrives decoded in pieces; the CID is the same). */
  put(bytes: Uint8Array | Uint8Array[]): Promise<StoredContent>
  /** Stores an item piece by piece as it arrives (the CID is the same as put's). */
  writer(): ContentWriter
  has(cid: string): Promise<boolean>
  size(cid: string): Promise<number | null>
  read(cid: string, range?: { offset: number; length: number }): AsyncIterable<Uint8Array>
  /**
   * A response body for the item or a range of it (`size` is the item's): bytes for a small item, a file for a
   * large one, so N downloads of a large item cost no N copies of it in memory.
   */
  body(cid: string, size: number, range?: { offset: number; length: number }): Promise<Uint8Array<ArrayBuffer> | Blob>
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

// Content is addressed by its hash, so a cached copy can never be stale: small items are kept in memory.
const CACHE_ITEM_MAX = 1024 * 1024
const CACHE_TOTAL_MAX = 64 * 1024 * 1024

function bytesCache() {
  const items = new Map<string, Uint8Array>()
  let total = 0
  return {
    get(cid: string): Uint8Array | undefined {
      const hit = items.get(cid)
      if (hit) {
        items.delete(cid) // most recently used goes last
        items.set(cid, hit)
      }
      return hit
    },
    set(cid: string, bytes: Uint8Array) {
      if (bytes.byteLength > CACHE_ITEM_MAX || items.has(cid)) return
      items.set(cid, bytes)
      total += bytes.byteLength
      for (const [key, value] of items) {
        if (total <= CACHE_TOTAL_MAX) break
        items.delete(key)
        total -= value.byteLength
      }
    },
  }
}

/** Yields the pieces and lets go of each once taken, so an import holds little more than what is still to come. */
async function* consume(pieces: Uint8Array[]) {
  while (pieces.length > 0) yield pieces.shift()!
}

/** How much a writer lets wait for the import: a few of its 256 KiB chunks. */
const WRITER_AHEAD_BYTES = 2 * 1024 * 1024

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

/** Large items served as files are kept in <data dir>/cache/content, up to this many bytes (then oldest first). */
const FILE_CACHE_BYTES = 1024 * 1024 * 1024

export async function openContent(dataDir: string, options: { fileCacheBytes?: number } = {}): Promise<ContentStore> {
  const blockstore = new LevelBlockstore(join(dataDir, 'blocks'))
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

  const store: ContentStore = {
    async put(input) {
      const size = Array.isArray(input) ? input.reduce((sum, piece) => sum + piece.byteLength, 0) : input.byteLength
      // A small item is joined (it is cached whole); a large one is imported piece by piece, never joined.
      const bytes = !Array.isArray(input) ? input : size <= CACHE_ITEM_MAX ? (input.length === 1 ? input[0]! : Buffer.concat(input, size)) : null
      const hold = held.begin()
      let cid: string
      try {
        const add = importer(hold)
        cid = (await (bytes ? add.addBytes(bytes, IMPORT_OPTIONS) : add.addByteStream(consume(input as Uint8Array[]), IMPORT_OPTIONS))).toString()
        await flushBlocks()
      } finally {
        hold.end()
      }
      sizes.set(cid, size)
      if (bytes) cache.set(cid, bytes)
      return { cid, size }
    },
    writer() {
      const queue = pieceQueue(WRITER_AHEAD_BYTES)
      let size = 0
      const hold = held.begin()
      const imported = importer(hold).addByteStream(queue.pieces, IMPORT_OPTIONS).then(async (cid) => {
        await flushBlocks()
        const text = cid.toString()
        sizes.set(text, size)
        return { cid: text, size }
      })
      imported.catch(() => {}).finally(hold.end) // a failure is seen through end(); after abort() it is expected
      return {
        push(piece) {
          size += piece.byteLength
          queue.push(piece)
        },
        // A failed import stops taking pieces: its failure ends the wait too.
        ready() {
          const room = queue.room()
          return room && Promise.race([room, imported.then(() => {})])
        },
        end() {
          queue.end()
          return imported
        },
        abort(reason) {
          queue.fail(reason)
        },
      }
    },
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
    read(text, range) {
      const cached = cache.get(text)
      if (cached) return consume([range ? cached.subarray(range.offset, range.offset + range.length) : cached])
      const cid = CID.parse(text)
      if (range || (sizes.get(text) ?? Infinity) > CACHE_ITEM_MAX) return fs.cat(cid, range ? { offset: range.offset, length: range.length } : {})
      // A whole small item: read it once, keep it.
      return (async function* () {
        const chunks: Uint8Array[] = []
        for await (const chunk of fs.cat(cid)) chunks.push(chunk)
        const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
        cache.set(text, bytes)
        yield bytes
      })()
    },
    async body(text, size, range) {
      if (size <= CACHE_ITEM_MAX) return collect(store.read(text, range), range?.length ?? size)
      const file = Bun.file(await files.path(text, size, () => fs.cat(CID.parse(text))))
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
