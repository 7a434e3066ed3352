// Collecting blocks no record names: what a failed or abandoned upload leaves behind (its blocks are written before
// the entry that would name them is committed, so a request that fails after that leaves them unreferenced).
//
// Mark and sweep, safe while the server imports: a block an import writes (or would write, had Helia not found it
// stored) is noted before Helia's put, spared while that import runs and for a minute after it. Each block is checked
// and deleted under Helia's write lock, which a put holds (read side) across its has() and its write: a block is
// never found by an import and then deleted under it.
import { CID } from 'multiformats/cid'
import * as dagPb from '@ipld/dag-pb'
import { breather } from '../lib/breathe.ts'
import { blockKey, keyCid, linksOf, readBlock } from './blocks.ts'
import type { LevelBlockstore } from 'blockstore-level'

const GRACE_MS = 60_000
// Blocks read (for their size) and deleted per turn of the lock: at most 64 × 256 KiB in memory at once.
const DELETE_BATCH = 64

/**
 * The blocks imports hold: those an import under way has written (or found already stored), and for `graceMs` after
 * it ends, the time its caller takes to commit the record naming them. Each import holds only its own blocks, so a
 * slow upload keeps nothing but itself from being collected.
 */
export function heldBlocks(graceMs = GRACE_MS) {
  const held = new Map<string, number>() // block → how many imports under way hold it
  const released = new Map<string, number>() // block → when the last import holding it ended; oldest first
  const prune = () => {
    const before = Date.now() - graceMs
    for (const [key, at] of released) {
      if (at >= before) break
      released.delete(key)
    }
  }
  return {
    /** An import starts: it notes each block before writing it, and ends either way. */
    begin() {
      const keys = new Set<string>()
      return {
        note(cid: CID) {
          const key = blockKey(cid)
          if (keys.has(key)) return
          keys.add(key)
          held.set(key, (held.get(key) ?? 0) + 1)
        },
        end() {
          const now = Date.now()
          for (const key of keys) {
            const holders = held.get(key)! - 1
            if (holders === 0) held.delete(key)
            else held.set(key, holders)
            released.delete(key)
            released.set(key, now)
          }
          keys.clear()
          prune()
        },
      }
    },
    isHeld(key: string) {
      if (held.has(key)) return true
      const at = released.get(key)
      return at !== undefined && at >= Date.now() - graceMs
    },
  }
}
export type HeldBlocks = ReturnType<typeof heldBlocks>
export type Hold = ReturnType<HeldBlocks['begin']>

export interface Collected {
  /** Blocks in the store before, kept because a record names them (directly or under an item). */
  kept: number
  /** Blocks no record names that were spared: held by an import under way or ended less than a minute ago. */
  spared: number
  /** Blocks removed (or, on a dry run, that would be). */
  removed: number
  removed_bytes: number
  dry_run: boolean
}

/**
 * Removes every block not under one of `named()`'s items. `named` is read after the store is listed: a block
 * written later is not a candidate, one written earlier is named by then or held.
 */
export async function collectGarbage(parts: {
  store: LevelBlockstore
  /** Helia's blockstore: its deletes take the lock imports hold. */
  locked: { deleteMany(cids: AsyncIterable<CID>): AsyncIterable<unknown> | Iterable<unknown> }
  held: HeldBlocks
  named: () => string[] | Promise<string[]>
  dryRun: boolean
  progress: (what: string, done: number, total?: number) => void
  skipKey: (key: string) => boolean
}): Promise<Collected> {
  const { store, locked, held, progress } = parts
  const breathe = breather()
  const all: string[] = []
  for await (const key of store.db.keys()) {
    await breathe()
    if (!parts.skipKey(key)) all.push(key)
    if (all.length % 10_000 === 0) progress('listed blocks', all.length)
  }

  const reachable = new Set<string>()
  const roots = await parts.named()
  let marked = 0
  for (const text of roots) {
    await breathe()
    const pending = [CID.parse(text)]
    while (pending.length > 0) {
      const cid = pending.pop()!
      const key = blockKey(cid)
      if (reachable.has(key)) continue
      reachable.add(key)
      if (cid.code !== dagPb.code || !(await store.has(cid))) continue // a leaf has no links; a missing block is verify's to report
      pending.push(...linksOf(cid, await readBlock(store, cid)))
    }
    progress('marked items', ++marked, roots.length)
  }

  const candidates: string[] = []
  for (const key of all) {
    await breathe()
    if (!reachable.has(key)) candidates.push(key)
  }
  const result: Collected = { kept: all.length - candidates.length, spared: 0, removed: 0, removed_bytes: 0, dry_run: parts.dryRun }
  for (let start = 0; start < candidates.length; start += DELETE_BATCH) {
    const batch = candidates.slice(start, start + DELETE_BATCH)
    const sizes = await store.db.getMany(batch)
    const doomed = async function* () {
      for (const [i, key] of batch.entries()) {
        // Checked here, inside the write lock: no put is between its has() and its write now.
        if (held.isHeld(key) || sizes[i] == null) {
          if (sizes[i] != null) result.spared++
          continue
        }
        result.removed++
        result.removed_bytes += sizes[i]!.byteLength
        if (!parts.dryRun) yield keyCid(key)
      }
    }
    if (parts.dryRun) for await (const _ of doomed());
    else for await (const _ of locked.deleteMany(doomed()));
    progress('swept blocks', Math.min(start + DELETE_BATCH, candidates.length), candidates.length)
  }
  // LevelDB frees the space of deleted blocks when it compacts them (classic-level, Node's level, can be asked to).
  const level = store.db as unknown as { compactRange(start: string, end: string): Promise<void> }
  if (!parts.dryRun && result.removed > 0) await level.compactRange('/', '/\xff')
  return result
}

