// The private content store: an embedded Helia node with no networking, over LevelDB on disk.
import { join } from 'node:path'
import { createHeliaLight } from 'helia'
import { unixfs } from '@helia/unixfs'
import { LevelBlockstore } from 'blockstore-level'
import { LevelDatastore } from 'datastore-level'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { CID } from 'multiformats/cid'

// The options of `ipfs add --cid-version 1`, spelled out so the CID never drifts with library defaults.
const IMPORT_OPTIONS = {
  cidVersion: 1 as const,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize: 262_144 }),
  layout: balanced({ maxChildrenPerNode: 174 }),
}

export interface ContentStore {
  put(bytes: Uint8Array): Promise<{ cid: string; size: number }>
  has(cid: string): Promise<boolean>
  size(cid: string): Promise<number | null>
  read(cid: string, range?: { offset: number; length: number }): AsyncIterable<Uint8Array>
  close(): Promise<void>
}

export function parseCid(text: string): CID | null {
  try {
    return CID.parse(text)
  } catch {
    return null
  }
}

export async function openContent(dataDir: string): Promise<ContentStore> {
  const blockstore = new LevelBlockstore(join(dataDir, 'blocks'))
  const datastore = new LevelDatastore(join(dataDir, 'datastore'))
  await blockstore.open()
  await datastore.open()
  const helia = await createHeliaLight({ blockstore, datastore })
  await helia.start()
  const fs = unixfs(helia)

  return {
    async put(bytes) {
      const cid = await fs.addBytes(bytes, IMPORT_OPTIONS)
      return { cid: cid.toString(), size: bytes.byteLength }
    },
    async has(text) {
      const cid = parseCid(text)
      return cid !== null && (await blockstore.has(cid))
    },
    async size(text) {
      const cid = parseCid(text)
      if (cid === null || !(await blockstore.has(cid))) return null
      const stat = await fs.stat(cid)
      return Number(stat.size)
    },
    read(text, range) {
      const cid = CID.parse(text)
      return fs.cat(cid, range ? { offset: range.offset, length: range.length } : {})
    },
    async close() {
      await helia.stop()
      await blockstore.close()
      await datastore.close()
    },
  }
}
