// The server key kept in the database itself, for engines shared by many instances (every instance signs alike):
// the first process to start creates it, every other one reads that one.
import { randomBytes } from 'node:crypto'
import type { Sql } from './query.ts'
import { metaStore } from './meta.ts'

export async function claimedSecret(sql: Sql): Promise<Uint8Array> {
  const hex = await metaStore(sql).claim('secret', randomBytes(32).toString('hex'))
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error("the database's secret is not a 32-byte hex key")
  return Buffer.from(hex, 'hex')
}
