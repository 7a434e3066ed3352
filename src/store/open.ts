// Where the records live: the one decision every process makes the same way (the server, the data commands,
// verify-ledger, the long-reads worker). Today the embedded engine, a SQLite file in the data directory; the
// PostgreSQL adapter is chosen here too, so nothing above learns which engine it got.
import { join } from 'node:path'
import { openEmbeddedRecords, SchemaMismatch, type OpenMode } from './sqlite/database.ts'
import type { Records } from './stores.ts'

export { SchemaMismatch, type OpenMode }

export const databaseFile = (dataDir: string) => join(dataDir, 'trellis.db')

/** The records of a data directory. `assertNoIo`: fail a transaction that awaits anything but its statements (tests). */
export const openRecords = (dataDir: string, mode: OpenMode, options: { assertNoIo?: boolean } = {}): Records =>
  openEmbeddedRecords(databaseFile(dataDir), mode, options)

/** The records of a database copy (a backup's trellis.db), read as they are. */
export const openCopy = (path: string): Records => openEmbeddedRecords(path, 'readonly')
