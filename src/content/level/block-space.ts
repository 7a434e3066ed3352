// The LevelDB block space: blockstore-level on disk, plus what the content store needs that a Blockstore does not
// say: a listing, a removal that never loses a block an import is writing, a durability barrier, compaction.
//
// LevelDB keeps no time a block was written, so imports hold their blocks instead (held-blocks.ts). A removal
// checks and deletes under the exclusive side of a lock whose shared side every put takes around its write: an
// import notes a block before its put, so either the note came before the check (the block is spared) or the put
// waits for the deletes to end and writes the block again.
import { LevelBlockstore } from 'blockstore-level'
import type { CID } from 'multiformats/cid'
import { readWriteLock } from '../../lib/read-write-lock.ts'
import { sharedRuns } from '../../lib/shared-runs.ts'
import type { BlockSpace, ListedBlock } from '../store.ts'
import { heldBlocks } from './held-blocks.ts'
import { blockKey, keyCid } from './keys.ts'

/**
 * LevelDB's in-memory table for blocks. Its 4 MiB default turns one large upload into a dozen level-0 files, and
 * uploads in a row into compaction stalls (docs/performance.md, "LevelDB write buffer").
 */
const WRITE_BUFFER_BYTES = 16 * 1024 * 1024
/**
 * Tables LevelDB keeps open, each mapped into memory whole: the default 1000 lets a store that keeps growing map a
 * thousand tables of 2 MiB (RSS that grows with the store, docs/performance.md "soak"). A table closed is opened
 * again on its next read.
 */
const OPEN_TABLES = 32

/** A key no block can have (block keys are base32 multihashes), written by the durability barrier. */
const SYNC_KEY = '/trellis-sync-barrier'

/** A listed block: its CID is decoded from its key only when asked for (a collection goes by key). */
class ListedLevelBlock implements ListedBlock {
  readonly storedAt = null
  constructor(readonly key: string) {}
  get cid(): CID {
    return keyCid(this.key)
  }
}

export class LevelBlockSpace extends LevelBlockstore implements BlockSpace {
  readonly holds = heldBlocks()
  readonly #writes = readWriteLock()
  // LevelDB writes its log without fsync; one synced write flushes everything before it. Concurrent imports share
  // one such write.
  readonly #flush = sharedRuns(() => this.db.put(SYNC_KEY, new Uint8Array(0), { sync: true }))

  constructor(path: string) {
    super(path, { writeBufferSize: WRITE_BUFFER_BYTES, maxOpenFiles: OPEN_TABLES })
  }

  override put(...args: Parameters<LevelBlockstore['put']>): Promise<CID> {
    return this.#writes.shared(() => super.put(...args))
  }

  async *list(): AsyncGenerator<ListedBlock> {
    for await (const key of this.db.keys()) if (key !== SYNC_KEY) yield new ListedLevelBlock(key)
  }

  keyOf(cid: CID): string {
    return blockKey(cid)
  }

  async removeUnreferenced(
    keys: string[],
    olderThan: number | null,
    options: { dryRun?: boolean } = {},
  ): Promise<{ removed: number; bytes: number }> {
    if (olderThan !== null) throw new Error('LevelDB keeps no time a block was written: its imports hold their blocks instead')
    // Read before the lock, so puts wait only for the check and the deletes (one under way now was noted already).
    const stored = await this.db.getMany(keys)
    const removable = () => {
      const doomed: string[] = []
      let bytes = 0
      for (const [i, key] of keys.entries()) {
        if (stored[i] == null || this.holds.isHeld(key)) continue
        doomed.push(key)
        bytes += stored[i]!.byteLength
      }
      return { doomed, bytes }
    }
    if (options.dryRun) {
      const { doomed, bytes } = removable()
      return { removed: doomed.length, bytes }
    }
    return this.#writes.exclusive(async () => {
      const { doomed, bytes } = removable()
      if (doomed.length > 0) await this.db.batch(doomed.map((key) => ({ type: 'del' as const, key })))
      return { removed: doomed.length, bytes }
    })
  }

  sync(): Promise<void> {
    return this.#flush()
  }

  /** LevelDB frees the space of deleted blocks when it compacts them (classic-level can be asked to). */
  compact(): Promise<void> {
    return (this.db as unknown as { compactRange(start: string, end: string): Promise<void> }).compactRange('/', '/\xff')
  }
}

export async function openLevelBlockSpace(path: string): Promise<LevelBlockSpace> {
  const space = new LevelBlockSpace(path)
  await space.open()
  return space
}
