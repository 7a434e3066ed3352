// Where content blocks are kept, as the content store asks of it: declared here, below both the content store
// (content/) and the records adapters that can host a space beside their records (store/<engine>/blocks/).
import type { Blockstore } from 'interface-blockstore'
import type { CID } from 'multiformats/cid'

/**
 * A block as listed: `key` is its name in the space (keyOf its CID), `storedAt` when it was last written (milliseconds
 * since the epoch), or null in a space that does not know.
 */
export interface ListedBlock {
  readonly key: string
  readonly cid: CID
  readonly storedAt: number | null
}

/** One import's blocks, noted before each is written; `end` when the import is over, stored or failed. */
export interface Hold {
  note(cid: CID): void
  end(): void
}

/**
 * Where blocks are kept. `put` always writes (it never skips a block found stored), so a block an import puts is
 * there when the put resolves, whatever a collection did before.
 */
export interface BlockSpace extends Blockstore {
  /** Every block, each once, in no particular order. */
  list(): AsyncIterable<ListedBlock>
  /** The name the space gives a block (a function of its multihash): a collection compares blocks by it. */
  keyOf(cid: CID): string
  /**
   * Removes those of `keys` no import may still need: written before `olderThan` (milliseconds since the epoch; a
   * space that knows when blocks were written), or, given null, not held (a space that does not, and so has `holds`).
   * Atomic with respect to puts: a put either lands after the removal or its block was held (or recent) and is kept.
   * A dry run removes nothing and counts the same.
   */
  removeUnreferenced(keys: string[], olderThan: number | null, options?: { dryRun?: boolean }): Promise<{ removed: number; bytes: number }>
  /** Resolves once every block put before the call is durable. */
  sync(): Promise<void>
  /** Gives back the space removed blocks took, where the engine does not do so by itself. */
  compact(): Promise<void>
  /** Set by a space that cannot tell when a block was written: each import holds the blocks it puts (see Hold). */
  readonly holds?: { begin(): Hold }
}
