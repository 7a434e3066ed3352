// Blocks of the LevelDB blockstore, read directly (not through Helia) by the content store's checks and its collection.
import { CID } from 'multiformats/cid'
import { base32upper } from 'multiformats/bases/base32'
import { decode as decodeDigest } from 'multiformats/hashes/digest'
import * as raw from 'multiformats/codecs/raw'
import * as dagPb from '@ipld/dag-pb'
import type { LevelBlockstore } from 'blockstore-level'

/** The key a block has in the LevelDB blockstore (its multihash, as blockstore-level spells it). */
export const blockKey = (cid: CID) => `/${base32upper.encode(cid.multihash.bytes)}`
/** A block's CID from its key in the LevelDB blockstore (blockKey's inverse, as a raw CID: deletion goes by multihash). */
export const keyCid = (key: string) => CID.createV1(raw.code, decodeDigest(base32upper.decode(key.slice(1))))

/** A stored block's bytes (it must be present). */
export async function readBlock(store: LevelBlockstore, cid: CID): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of store.get(cid)) chunks.push(chunk)
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/** The blocks a block links to: a UnixFS node's children; none for a raw leaf. */
export const linksOf = (cid: CID, bytes: Uint8Array): CID[] => (cid.code === dagPb.code ? dagPb.decode(bytes).Links.map((link) => link.Hash) : [])
