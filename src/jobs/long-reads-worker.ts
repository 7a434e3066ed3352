// The long-reads thread (see long-reads.ts): its own read-only records, opened at the first request. Leaderboards
// and ranks are published on the records' snapshot shelf as they are built: for the other instances on a shared
// database, and for the next start.
import { buildLeaderboards, type BoardKey } from '../domain/leaderboards.ts'
import { openRecords } from '../store/open.ts'
import type { Records } from '../store/stores.ts'
import type { BoardsSnapshot, LongReadsRequest, LongReadsResult, RanksSnapshot } from './long-reads.ts'

declare const self: Worker

let opened: Promise<Records> | null = null

self.onmessage = async (event: MessageEvent<LongReadsRequest | { close: true }>) => {
  if ('close' in event.data) {
    const records = opened
    opened = null
    await (await records?.catch(() => null))?.close()
    return postMessage({ closed: true })
  }
  const request = event.data
  const started = performance.now()
  try {
    // A failed open (the database restarting) is tried again by the next request.
    const records = await (opened ??= openRecords(request.place, 'readonly').catch((error) => {
      opened = null
      throw error
    }))
    const result: LongReadsResult = { id: request.id, ms: 0 }
    if (request.boards) {
      const boards = await records.snapshot((view) => buildLeaderboards(view.stats, request.now))
      result.boards = Object.fromEntries(
        Object.entries(boards).map(([key, items]) => [key, items.map((item) => JSON.stringify(item))]),
      ) as Record<BoardKey, string[]>
      result.boardsGeneration = await records.snapshots.publish(
        'boards',
        request.now,
        JSON.stringify({ generated_at: request.now, boards: result.boards } satisfies BoardsSnapshot),
      )
    }
    if (request.ranks) {
      result.ranks = await records.reads.stats.ranks()
      result.ranksGeneration = await records.snapshots.publish(
        'ranks',
        request.now,
        JSON.stringify({ generated_at: request.now, ranks: result.ranks } satisfies RanksSnapshot),
      )
    }
    if (request.checks) result.problems = await records.snapshot((view) => view.audit.inconsistencies())
    if (request.integrity) result.integrity = await records.upkeep.integrity()
    if (request.copyTo) await records.upkeep.copyTo(request.copyTo)
    if (request.namedCids) result.cids = await records.read.inventory.namedCids()
    result.ms = performance.now() - started
    postMessage(result)
  } catch (error) {
    postMessage({
      id: request.id,
      ms: performance.now() - started,
      error: String((error as Error)?.message ?? error),
    } satisfies LongReadsResult)
  }
}
