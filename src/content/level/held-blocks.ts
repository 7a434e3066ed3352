// The blocks imports hold, for a space that cannot tell when a block was written (LevelDB keeps no such time): a
// collection spares them, so the record an import is about to commit never names a block removed under it.
import type { CID } from 'multiformats/cid'
import type { Hold } from '../store.ts'
import { blockKey } from './keys.ts'

const GRACE_MS = 60_000

/**
 * The blocks imports hold: those an import under way has written, and for `graceMs` after it ends, the time its
 * caller takes to commit the record naming them. Each import holds only its own blocks, so a slow upload keeps
 * nothing but itself from being collected. `now` is the clock the grace runs by (a test's own, so a pause of a loaded
 * machine cannot end it early).
 */
export function heldBlocks(graceMs = GRACE_MS, now: () => number = Date.now) {
  const held = new Map<string, number>() // block → how many imports under way hold it
  const released = new Map<string, number>() // block → when the last import holding it ended; oldest first
  const prune = () => {
    const before = now() - graceMs
    for (const [key, at] of released) {
      if (at >= before) break
      released.delete(key)
    }
  }
  return {
    /** An import starts: it notes each block before writing it, and ends either way. */
    begin(): Hold {
      const keys = new Set<string>()
      return {
        note(cid: CID) {
          const key = blockKey(cid)
          if (keys.has(key)) return
          keys.add(key)
          held.set(key, (held.get(key) ?? 0) + 1)
        },
        end() {
          const endedAt = now()
          for (const key of keys) {
            const holders = held.get(key)! - 1
            if (holders === 0) held.delete(key)
            else held.set(key, holders)
            released.delete(key)
            released.set(key, endedAt)
          }
          keys.clear()
          prune()
        },
      }
    },
    isHeld(key: string) {
      if (held.has(key)) return true
      const at = released.get(key)
      return at !== undefined && at >= now() - graceMs
    },
  }
}
export type HeldBlocks = ReturnType<typeof heldBlocks>
