// The leaderboards and wallet ranks (and the database's own checks, backup copy and named CIDs), built on a thread of
// their own with a read-only connection, so a rebuild never holds the event loop. Each result is also written to the
// data directory: a restarted server serves the last one at once, before its first rebuild.
import { Database } from 'bun:sqlite'
import { buildLeaderboards, type BoardKey } from '../domain/leaderboards.ts'
import { integrityCheck } from '../store/sqlite/database.ts'
import { embeddedRecords } from '../store/sqlite/records.ts'
import type { Records } from '../store/stores.ts'
import { namedCids } from '../store/named-cids.ts'
import { persist, type BuildRequest, type BuildResult } from './stats-files.ts'

declare const self: Worker

let db: Database | null = null
let records: Records | null = null

self.onmessage = async (event: MessageEvent<BuildRequest | { close: true }>) => {
  if ('close' in event.data) {
    await records?.close()
    db = records = null
    return postMessage({ closed: true })
  }
  const request = event.data
  const started = performance.now()
  try {
    if (!db || !records) {
      db = new Database(request.dbPath, { readonly: true, strict: true })
      db.exec('PRAGMA busy_timeout = 5000')
      records = embeddedRecords(db)
    }
    const result: BuildResult = { id: request.id, ms: 0 }
    if (request.boards) {
      const boards = await records.snapshot((view) => buildLeaderboards(view.stats, request.now))
      result.boards = Object.fromEntries(Object.entries(boards).map(([key, items]) => [key, items.map((item) => JSON.stringify(item))])) as Record<BoardKey, string[]>
      persist(request.dataDir, 'boards', { generated_at: request.now, boards: result.boards })
    }
    if (request.ranks) {
      result.ranks = await records.read.stats.ranks()
      persist(request.dataDir, 'ranks', { generated_at: request.now, ranks: result.ranks })
    }
    if (request.checks) result.problems = await records.snapshot((view) => view.audit.inconsistencies())
    if (request.integrity) result.integrity = integrityCheck(db)
    if (request.snapshotTo) db.query('VACUUM INTO ?').run(request.snapshotTo)
    if (request.namedCids) result.cids = namedCids(db)
    result.ms = performance.now() - started
    postMessage(result)
  } catch (error) {
    postMessage({ id: request.id, ms: performance.now() - started, error: String((error as Error)?.message ?? error) } satisfies BuildResult)
  }
}
