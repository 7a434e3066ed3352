// The server key for JWTs and page tokens beside an embedded database: random on first start, kept in
// <data-dir>/secret.key (0600) next to trellis.db, so a backup of the directory carries it.
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

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
