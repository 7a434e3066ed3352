// The private content store: an embedded Helia node with no networking, over any block space (store.ts). Helia is
// the UnixFS engine and reads through its blockstore; imports write to the space directly, every block without
// asking first whether it is there, so a block is stored once its put resolves whatever a collection removed.
import { join } from 'node:path'
import { createHeliaLight } from 'helia'
import { unixfs } from '@helia/unixfs'
import type { Datastore } from 'interface-datastore'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { equals } from 'multiformats/bytes'
import { car } from '@helia/car'
import { CarBlockIterator } from '@ipld/car'
import { fileCache } from './file-cache.ts'
import { bytesCache, CACHE_ITEM_MAX } from './bytes-cache.ts'
import { newContentKey, opened, sealer } from './sealing.ts'
import { collectGarbage } from './garbage.ts'
import { linksOf, readBlock } from './blocks.ts'
import { uploadSpool } from './spool.ts'
import { concatChunks } from '../lib/chunks.ts'
import type { BlockSpace, ContentStore, Hold } from './store.ts'

// The options of `ipfs add --cid-version 1`, spelled out so the CID never drifts with library defaults.
const IMPORT_OPTIONS = {
  cidVersion: 1 as const,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize: 262_144 }),
  layout: balanced({ maxChildrenPerNode: 174 }),
}

export function parseCid(text: string): CID | null {
  try {
    return CID.parse(text)
  } catch {
    return null
  }
}

/** The bytes are the block this CID names (every block we store is SHA-256 addressed). */
const hashesTo = async (cid: CID, bytes: Uint8Array) =>
  cid.multihash.code === sha256.code && equals((await sha256.digest(bytes)).bytes, cid.multihash.bytes)

/**
 * Yields the pieces (sealed by `seal`, when given) and lets go of each once taken, so an import holds little more
 * than what is still to come.
 */
async function* consume(pieces: Uint8Array[], seal?: (piece: Uint8Array) => Uint8Array) {
  while (pieces.length > 0) yield seal ? seal(pieces.shift()!) : pieces.shift()!
}

/** A large item is read whole this much at a time (a few of its 256 KiB chunks). */
const READ_WINDOW_BYTES = 2 * 1024 * 1024

/** Large items served as files are kept in <cache dir>/content, up to this many bytes (then oldest first). */
const FILE_CACHE_BYTES = 1024 * 1024 * 1024

export interface ContentParts {
  space: BlockSpace
  /** Helia's own records: a node needs a datastore, though the content store keeps nothing in it. */
  datastore: Datastore
  /** Where the files of large items and of uploads under way are kept. */
  cacheDir: string
  fileCacheBytes?: number
  /** For a space without holds: how long a collection leaves new blocks alone (their records may be on the way). */
  graceMs?: number
}

/** A content store on `parts.space`; its close() stops Helia, and leaves the space and datastore to their opener. */
export async function contentStore(parts: ContentParts): Promise<ContentStore> {
  const { space } = parts
  if (!space.holds && parts.graceMs === undefined) throw new Error('a block space without holds needs a grace period for its collections')
  const helia = await createHeliaLight({ blockstore: space, datastore: parts.datastore })
  await helia.start()
  const fs = unixfs(helia)
  // An import notes each block before it is written, so a collection running meanwhile spares it (store.ts, Hold).
  const importer = (hold: Hold | undefined) =>
    unixfs({
      blockstore: {
        get: (...args: Parameters<BlockSpace['get']>) => space.get(...args),
        has: (...args: Parameters<BlockSpace['has']>) => space.has(...args),
        put: (...args: Parameters<BlockSpace['put']>) => (hold?.note(args[0]), space.put(...args)),
      },
    })
  const cache = bytesCache()
  const sizes = new Map<string, number>()
  const files = fileCache(join(parts.cacheDir, 'content'), parts.fileCacheBytes ?? FILE_CACHE_BYTES)
  let collecting = false // one collection at a time: a second would count the first one's removals again

  /** Stores an item's bytes, whole or as they come, durable when it resolves (before a record names it): its CID. */
  async function importItem(source: Uint8Array | AsyncIterable<Uint8Array>): Promise<string> {
    const hold = space.holds?.begin()
    try {
      const add = importer(hold)
      const cid = await (source instanceof Uint8Array ? add.addBytes(source, IMPORT_OPTIONS) : add.addByteStream(source, IMPORT_OPTIONS))
      await space.sync()
      return cid.toString()
    } finally {
      hold?.end()
    }
  }

  /** A large item whole, a window at a time: the exporter reads what is asked as fast as it can, whoever waits. */
  async function* inWindows(cid: CID, size: number): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < size; offset += READ_WINDOW_BYTES)
      yield* fs.cat(cid, { offset, length: Math.min(READ_WINDOW_BYTES, size - offset) })
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

  const spool = uploadSpool(join(parts.cacheDir, 'uploads'))

  const store: ContentStore = {
    async put(input, options = {}) {
      const key = options.sealed ? newContentKey() : undefined
      const seal = key && sealer(key)
      if (!(input instanceof Uint8Array) && !Array.isArray(input)) {
        let size = 0
        const cid = await importItem(
          (async function* () {
            for await (const piece of input) {
              size += piece.byteLength
              yield seal ? seal(piece) : piece
            }
          })(),
        )
        sizes.set(cid, size)
        return key ? { cid, size, key } : { cid, size }
      }
      const size = Array.isArray(input) ? input.reduce((sum, piece) => sum + piece.byteLength, 0) : input.byteLength
      // A small item is joined (it is cached whole, as stored); a large one is imported piece by piece, never joined.
      const joined = !Array.isArray(input)
        ? input
        : size <= CACHE_ITEM_MAX
          ? input.length === 1
            ? input[0]!
            : Buffer.concat(input, size)
          : null
      const bytes = joined && seal ? seal(joined) : joined
      const cid = await importItem(bytes ?? consume(input as Uint8Array[], seal))
      sizes.set(cid, size)
      if (bytes) cache.set(cid, bytes)
      return key ? { cid, size, key } : { cid, size }
    },
    writer: () => spool.writer(),
    cachedBytes: () => cache.bytes,
    cidOf: (text) => parseCid(text)?.toString() ?? null,
    async has(text) {
      const cid = parseCid(text)
      return cid !== null && (await space.has(cid))
    },
    async size(text) {
      const known = sizes.get(text)
      if (known !== undefined) return known
      const cid = parseCid(text)
      if (cid === null || !(await space.has(cid))) return null
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
      if (size <= CACHE_ITEM_MAX) return concatChunks(store.read(text, range, key), range?.length ?? size)
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
      return car(helia).export(
        roots.map((root) => CID.parse(root)),
        { offline: true, blockFilter: blockFilter as never },
      )
    },
    async importCar(source, onBlock) {
      const reader = await CarBlockIterator.fromIterable(source)
      let blocks = 0
      const hold = space.holds?.begin()
      try {
        for await (const { cid, bytes } of reader) {
          if (!(await hashesTo(cid, bytes))) throw new Error(`the CAR file holds a block that does not match its CID ${cid}`)
          hold?.note(cid)
          await space.put(cid, bytes)
          blocks++
          onBlock?.()
        }
        await space.sync()
      } finally {
        hold?.end()
      }
      return { roots: (await reader.getRoots()).map(String), blocks }
    },
    async check(text) {
      const root = parseCid(text)
      if (root === null) return 'not a CID'
      const pending = [root]
      while (pending.length > 0) {
        const cid = pending.pop()!
        if (!(await space.has(cid))) return `block ${cid} is missing`
        const bytes = await readBlock(space, cid)
        if (!(await hashesTo(cid, bytes))) return `block ${cid} does not hash to its CID`
        pending.push(...linksOf(cid, bytes))
      }
      return null
    },
    async collect(named, { dryRun, progress }) {
      if (collecting) throw new Error('a collection is already running')
      collecting = true
      try {
        const olderThan = space.holds ? null : Date.now() - parts.graceMs!
        return await collectGarbage({ space, olderThan, named, dryRun, progress })
      } finally {
        collecting = false
      }
    },
    async close() {
      await helia.stop()
    },
  }
  return store
}
