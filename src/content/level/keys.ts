// How blockstore-level spells a block's key: its multihash in base32upper after a slash. Only the LevelDB adapter
// (and its held blocks, which go by key) needs it; the rest of the content store goes by CID.
import { CID } from 'multiformats/cid'
import { base32upper } from 'multiformats/bases/base32'
import { decode as decodeDigest } from 'multiformats/hashes/digest'
import * as raw from 'multiformats/codecs/raw'

/** The key a block has in the LevelDB blockstore. */
export const blockKey = (cid: CID) => `/${base32upper.encode(cid.multihash.bytes)}`
/** A block's CID from its key (blockKey's inverse, as a raw CID: the store goes by multihash, not codec). */
export const keyCid = (key: string) => CID.createV1(raw.code, decodeDigest(base32upper.decode(key.slice(1))))
