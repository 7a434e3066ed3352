// The content ports: what the rest of the server asks of the content store (ContentStore), and what the content
// store asks of the place its blocks are kept (BlockSpace, declared in lib/ for the records adapters that host one). Types only.
import type { ContentKey } from './sealing.ts'
import type { ContentWriter } from './spool.ts'

export type { ArrivedContent, ContentWriter } from './spool.ts'
export type { ContentKey } from './sealing.ts'
export type { BlockSpace, Hold, ListedBlock } from '../lib/block-space.ts'

export interface StoredContent {
  cid: string
  size: number
  /** Set when the item was stored sealed (see sealing.ts): `cid` names the sealed bytes, opened with this key. */
  key?: ContentKey
}

/** Sealed: encrypted under a new key of its own, so the CID is not that of the content (paid content). */
export interface PutOptions {
  sealed?: boolean
}

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

export interface ContentStore {
  /** Stores bytes, whole, in pieces or as they come (a large upload is read back from its file); the CID is the same. */
  put(bytes: Uint8Array | Uint8Array[] | AsyncIterable<Uint8Array>, options?: PutOptions): Promise<StoredContent>
  /** A large upload's content, written to a file as it arrives, to be put() once its price is known (spool.ts). */
  writer(): ContentWriter
  /** `text` as the CID this store names an item by (its canonical text), or null when it is no CID. */
  cidOf(text: string): string | null
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
  body(
    cid: string,
    size: number,
    range?: { offset: number; length: number },
    key?: ContentKey | null,
  ): Promise<Uint8Array<ArrayBuffer> | Blob>
  /** A CAR file (v1) of these items and every block under them, each block once; `onBlock` counts them. */
  exportCar(roots: string[], onBlock?: () => void): AsyncIterable<Uint8Array>
  /** Stores every block of a CAR file (each checked against its CID); its roots and how many blocks it held. */
  importCar(source: AsyncIterable<Uint8Array>, onBlock?: () => void): Promise<{ roots: string[]; blocks: number }>
  /** Every block under `cid` is present and hashes to its CID: null, or what is wrong. */
  check(cid: string): Promise<string | null>
  /** Removes the blocks of items no record names (`named` lists those that are), sparing imports under way. */
  collect(
    named: () => string[] | Promise<string[]>,
    options: { dryRun: boolean; progress: (what: string, done: number, total?: number) => void },
  ): Promise<Collected>
  close(): Promise<void>
}
