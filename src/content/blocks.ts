// Blocks read one by one (not as files, through UnixFS): the content store's checks and its collection walk them.
import type { Blockstore } from 'interface-blockstore'
import type { CID } from 'multiformats/cid'
import * as dagPb from '@ipld/dag-pb'

/** A stored block's bytes (it must be present). */
export async function readBlock(store: Blockstore, cid: CID): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of store.get(cid)) chunks.push(chunk)
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/** The blocks a block links to: a UnixFS node's children; none for a raw leaf. */
export const linksOf = (cid: CID, bytes: Uint8Array): CID[] =>
  cid.code === dagPb.code ? dagPb.decode(bytes).Links.map((link) => link.Hash) : []
