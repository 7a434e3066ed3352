// What the block spaces keyed by multihash in PostgreSQL share (the blocks table, and the S3 space's index): a block's
// name, the CID a row is listed under, the bytes Bun hands back, and listing a table in pages by key.
import type { SQL } from 'bun'
import { CID } from 'multiformats/cid'
import { base32upper } from 'multiformats/bases/base32'
import * as raw from 'multiformats/codecs/raw'
import { decode as decodeDigest } from 'multiformats/hashes/digest'
import type { ListedBlock } from '../../../lib/block-space.ts'
import { reaching } from '../faults.ts'

export type Bytes = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>

/** Rows a listing reads at a time (keys and stamps only). */
const LIST_PAGE = 1000

/** A block's name in the space: its multihash, so the CIDv0 and CIDv1 of the same bytes are one block. */
export const keyOf = (cid: CID) => base32upper.encode(cid.multihash.bytes)
export const keyBytes = (key: string) => base32upper.decode(key)
/** The CID a row is listed under (the space goes by multihash, not codec, as blockstore-level does). */
export const rowCid = (mh: Uint8Array) => CID.createV1(raw.code, decodeDigest(mh))

/** Bun gives bytea back as a Buffer: hand out plain bytes, whose slice() copies as a Uint8Array's does. */
export const plain = (buffer: Uint8Array) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)

export async function joined(bytes: Bytes): Promise<Uint8Array> {
  if (bytes instanceof Uint8Array) return bytes
  const pieces: Uint8Array[] = []
  for await (const piece of bytes) pieces.push(piece)
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
}

export async function* single(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes
}

class ListedRow implements ListedBlock {
  constructor(
    readonly key: string,
    readonly storedAt: number,
    private readonly mh: Uint8Array,
  ) {}
  get cid(): CID {
    return rowCid(this.mh)
  }
}

/** Every row of `table` (mh, stored_at) in pages by key, so a large store is never read in one result. */
export async function* listRows(sql: SQL, table: 'blocks' | 'block_index'): AsyncGenerator<ListedBlock> {
  let after = new Uint8Array(0) // every multihash sorts after the empty one
  while (true) {
    const rows = await reaching(() =>
      sql.unsafe(`SELECT mh, stored_at FROM ${table} WHERE mh > $1 ORDER BY mh LIMIT ${LIST_PAGE}`, [after]),
    )
    for (const row of rows) {
      const mh = plain(row.mh)
      yield new ListedRow(base32upper.encode(mh), Number(row.stored_at), mh)
    }
    if (rows.length < LIST_PAGE) return
    after = rows.at(-1).mh
  }
}
