// The server key for JWTs and page tokens: random on first start, kept in <data-dir>/secret.key (0600) beside the
// embedded records, or in the database itself when the records are in PostgreSQL (every instance signs alike).
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Records } from './stores.ts'

export function loadSecret(dataDir: string): Uint8Array {
  const path = join(dataDir, 'secret.key')
  if (!existsSync(path)) {
    try {
      writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error // another process won the race: use its key
    }
  }
  chmodSync(path, 0o600)
  const hex = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a 32-byte hex key`)
  return Buffer.from(hex, 'hex')
}

/** The key kept with the records: the first process to start creates it, every other one reads that one. */
export async function loadDatabaseSecret(records: Records): Promise<Uint8Array> {
  const hex = await records.transact((tx) => tx.meta.claim('secret', randomBytes(32).toString('hex')))
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error('the database\'s secret is not a 32-byte hex key')
  return Buffer.from(hex, 'hex')
}

/** Where the key lives follows where the records do. */
export const loadServerSecret = (records: Records, dataDir: string): Promise<Uint8Array> =>
  records.dialect === 'postgres' ? loadDatabaseSecret(records) : Promise.resolve(loadSecret(dataDir))
