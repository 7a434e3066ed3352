// Collecting blocks no record names: what a failed or abandoned upload leaves behind (its blocks are written before
// the entry that would name them is committed, so a request that fails after that leaves them unreferenced).
//
// Mark and sweep, safe while the server imports. The space is listed before the records are read: a block written
// later is no candidate, and one written earlier is either named by then or still wanted by an import whose record
// is not committed yet. The space spares those (held by their import, or written recently) in the same step as it
// removes the rest, so no import's put falls between the decision and the delete (BlockSpace.removeUnreferenced).
import { CID } from 'multiformats/cid'
import * as dagPb from '@ipld/dag-pb'
import { breather } from '../lib/breathe.ts'
import { linksOf, readBlock } from './blocks.ts'
import type { BlockSpace, Collected } from './store.ts'

// Blocks handed to the space per removal: it may read them all at once (for their size), and puts wait for it.
const DELETE_BATCH = 64

/**
 * Removes every block not under one of `named()`'s items. `olderThan` is what the space spares by (see
 * BlockSpace.removeUnreferenced); `named` is read after the space is listed.
 */
export async function collectGarbage(parts: {
  space: BlockSpace
  olderThan: number | null
  named: () => string[] | Promise<string[]>
  dryRun: boolean
  progress: (what: string, done: number, total?: number) => void
}): Promise<Collected> {
  const { space, progress, dryRun } = parts
  const breathe = breather()
  const keys: string[] = []
  for await (const { key } of space.list()) {
    await breathe()
    keys.push(key)
    if (keys.length % 10_000 === 0) progress('listed blocks', keys.length)
  }

  const reachable = new Set<string>()
  const roots = await parts.named()
  let marked = 0
  for (const text of roots) {
    await breathe()
    const pending = [CID.parse(text)]
    while (pending.length > 0) {
      const cid = pending.pop()!
      const key = space.keyOf(cid)
      if (reachable.has(key)) continue
      reachable.add(key)
      if (cid.code !== dagPb.code || !(await space.has(cid))) continue // a leaf has no links; a missing block is verify's to report
      pending.push(...linksOf(cid, await readBlock(space, cid)))
    }
    progress('marked items', ++marked, roots.length)
  }

  const candidates: string[] = []
  for (const key of keys) {
    await breathe()
    if (!reachable.has(key)) candidates.push(key)
  }
  const result: Collected = { kept: keys.length - candidates.length, spared: 0, removed: 0, removed_bytes: 0, dry_run: dryRun }
  for (let start = 0; start < candidates.length; start += DELETE_BATCH) {
    const batch = candidates.slice(start, start + DELETE_BATCH)
    // One collection at a time, and nothing else removes blocks: every listed block is still there, so what is
    // not removed was spared.
    const { removed, bytes } = await space.removeUnreferenced(batch, parts.olderThan, { dryRun })
    result.removed += removed
    result.removed_bytes += bytes
    result.spared += batch.length - removed
    progress('swept blocks', Math.min(start + DELETE_BATCH, candidates.length), candidates.length)
  }
  if (!dryRun && result.removed > 0) await space.compact()
  return result
}
