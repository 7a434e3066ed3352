// The records contract (test/records/common.case.ts) on PostgreSQL: every opening a pool (and a change feed) of its own on one fresh
// migrated database of this file, as instances of a cluster share theirs. The PostgreSQL pass runs it; on the
// embedded pass it is skipped, saying why.
import { afterAll, beforeAll, describe } from 'bun:test'
import { TEST_POSTGRES, testDatabase, type TestDatabase } from '../dev/test-database.ts'
import { openRecords } from '../src/store/open.ts'
import { recordsContract } from './records/common.case.ts'

if (!TEST_POSTGRES)
  console.log(
    'records-contract-postgres.test.ts: skipped: it needs a PostgreSQL cluster (TRELLIS_TEST_POSTGRES; the PostgreSQL pass runs it)',
  )

describe.skipIf(!TEST_POSTGRES)('PostgreSQL', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = (await testDatabase())!
  })
  afterAll(async () => {
    await database?.drop()
  })

  recordsContract({
    name: 'PostgreSQL',
    open: () => openRecords({ engine: 'postgres', url: database.url, directUrl: database.directUrl, pool: 4 }, 'current', { listen: true }),
    sharedDatabase: true,
    hostsBlocks: true,
  })
})
