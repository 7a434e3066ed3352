// Serves wallet statistics (live) and the leaderboards and ranks of the last snapshot. Snapshots are built
// elsewhere (off the event loop) and installed whole; leaderboard bodies are kept as JSON text, so a read joins
// strings instead of serialising objects.
import type { WalletRanks } from '../store/stats.ts'
import type { Records } from '../store/stores.ts'
import type { WalletService } from './wallets.ts'
import { ranksFrom, walletStats, type Ranks } from './wallet-stats.ts'
import { PERIODS, type Period } from './tallies.ts'
import type { BoardKey, PeriodBoard, PlainBoard } from './leaderboards.ts'
import { fail } from './errors.ts'
import { nowSeconds } from '../lib/clock.ts'

/** Each board's items, each item already serialised. */
// Enough for the usual page sizes of every board; a body is at most ~100 KB.
const MEMO_BODIES = 64

export type SerialisedBoards = Partial<Record<BoardKey, string[]>>

const QUOTED_UUID = /"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/g

/** The boards without the items of taken-down feeds: a feed's item is the only one naming its id. */
function without(boards: SerialisedBoards, feedIds: ReadonlySet<string>): SerialisedBoards {
  if (feedIds.size === 0) return boards
  const names = (item: string) => [...item.matchAll(QUOTED_UUID)].some((match) => feedIds.has(match[1]!))
  return Object.fromEntries(Object.entries(boards).map(([key, items]) => [key, items.filter((item) => !names(item))]))
}

export function statsService(d: { records: Records; wallets: WalletService }) {
  let installed: SerialisedBoards = {}
  let boards: SerialisedBoards = {}
  /** Feeds taken down: left out of the boards at once, not only from the next build on. */
  let hidden: ReadonlySet<string> = new Set()
  let hiddenRead = Promise.resolve()
  let ranks: Ranks = ranksFrom([])
  let ranksGeneration = 0
  let bodies = new Map<string, string>() // by board key and length, for the current boards
  let boardsGeneration = 0

  function body(key: BoardKey, length: number, period?: Period): string {
    const memo = `${key}#${length}`
    let text = bodies.get(memo)
    if (text === undefined) {
      const items = (boards[key] ?? []).slice(0, length).join(',')
      text = period === undefined ? `{"data":[${items}]}` : `{"data":[${items}],"period":"${period}"}`
      if (bodies.size < MEMO_BODIES) bodies.set(memo, text)
    }
    return text
  }

  return {
    installBoards(next: SerialisedBoards): void {
      installed = next
      boards = without(next, hidden)
      bodies = new Map()
      boardsGeneration++
    },
    /** Reads which feeds stand taken down (at start, after a takedown, on another instance's notice); one read at a time. */
    takedownsChanged(): Promise<void> {
      hiddenRead = hiddenRead
        .catch(() => {})
        .then(async () => {
          const now = new Set(await d.records.read.takedowns.standingFeeds())
          if (now.size === hidden.size && [...now].every((id) => hidden.has(id))) return
          hidden = now
          boards = without(installed, hidden)
          bodies = new Map()
          boardsGeneration++
        })
      return hiddenRead
    },
    /** Changes whenever new leaderboards are installed. */
    boardsGeneration: () => boardsGeneration,
    installRanks(rows: WalletRanks[]): void {
      ranks = ranksFrom(rows)
      ranksGeneration++
    },
    async stats(walletId: string, now = nowSeconds()) {
      return walletStats(d.records, ranks, await d.wallets.byId(walletId), now)
    },
    /** Changes whenever new ranks are installed. */
    ranksGeneration: () => ranksGeneration,
    period(raw: string | undefined): Period {
      if (raw === undefined || raw === '') return 'all'
      if (!Object.hasOwn(PERIODS, raw)) fail('INVALID_PARAMETER', 'invalid period', 'period must be one of 1d, 7d, 30d, all')
      return raw as Period
    },
    /** The JSON body of a board with a period: {"data":[…],"period":…}. */
    byPeriod: (board: PeriodBoard, period: Period, length: number) => body(`${board}:${period}`, length, period),
    /** The JSON body of a board without a period: {"data":[…]}. */
    plain: (board: PlainBoard, length: number) => body(board, length),
    recentEntries: (beforeId: string | undefined, limit: number) => d.records.reads.stats.recentEntries(beforeId, limit),
    /** What is for sale now, newest first (offset paging, as x402 discovery pages); `payTo`: what one owner sells. */
    forSale: (limit: number, offset: number, payTo?: string, now = nowSeconds()) =>
      d.records.reads.stats.forSale(now, limit, offset, payTo?.toLowerCase()),
    forSaleCount: (payTo?: string, now = nowSeconds()) => d.records.reads.stats.forSaleCount(now, payTo?.toLowerCase()),
  }
}
export type StatsService = ReturnType<typeof statsService>
