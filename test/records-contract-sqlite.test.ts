// The records contract (test/records/common.case.ts) on the embedded engine: each opening a migrated SQLite file in
// a data directory of its own, with the I/O check of tests on.
import { afterAll } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../dev/server.ts'
import { openRecords } from '../src/store/open.ts'
import { recordsContract } from './records/common.case.ts'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

recordsContract({
  name: 'embedded SQLite',
  open: async () => {
    const dataDir = tempDir('trellis-records-contract-')
    dirs.push(dataDir)
    return openRecords({ engine: 'sqlite', dataDir }, 'migrate', { assertNoIo: true })
  },
  sharedDatabase: false,
  hostsBlocks: false,
})
