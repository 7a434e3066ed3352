// In-process timers: nonce cleanup, paid→free expiry, reconciliation of interrupted payments, statistics and
// leaderboard snapshots, wallet ranks. Each runs once
// at start, then on its period; a job never overlaps itself.
import type { Db } from '../store/db.ts'
import type { Logger } from '../log.ts'
import type { PurchaseService } from '../domain/purchases.ts'
import type { MarketService } from '../domain/market-service.ts'
import { nonceStore } from '../store/nonces.ts'
import { entryStore } from '../store/entries.ts'
import { nowSeconds } from '../lib/clock.ts'

interface JobState { lastRun: number | null; lastError: string | null; running: boolean }

export interface Jobs {
  status(): Record<string, { last_run: number | null; last_error: string | null }>
  stop(): void
}

export function startJobs(d: { db: Db; log: Logger; purchases: PurchaseService; market: MarketService; statsRefreshS: number; rankingsRefreshS: number }): Jobs {
  const nonces = nonceStore(d.db)
  const entries = entryStore(d.db)
  const state: Record<string, JobState> = {}
  const timers: ReturnType<typeof setInterval>[] = []

  function every(name: string, seconds: number, job: () => unknown | Promise<unknown>, runAtStart = true) {
    state[name] = { lastRun: null, lastError: null, running: false }
    const run = async () => {
      const s = state[name]
      if (s.running) return
      s.running = true
      try {
        await job()
        s.lastError = null
      } catch (error) {
        s.lastError = String((error as Error).message).split('\n')[0]
        d.log.error('job failed', { job: name, error: s.lastError })
      } finally {
        s.lastRun = nowSeconds()
        s.running = false
      }
    }
    if (runAtStart) void run()
    else state[name].lastRun = nowSeconds()
    const timer = setInterval(run, seconds * 1000)
    timer.unref()
    timers.push(timer)
  }

  every('nonce-cleanup', 600, () => nonces.purgeExpiredBefore(nowSeconds() - 3600))
  every('entry-expiry', 30, () => entries.freeExpired(nowSeconds()))
  every('payment-reconciliation', 30, async () => {
    const counts = await d.purchases.reconcilePending()
    if (counts.settled || counts.failed) d.log.info('payments reconciled', counts)
  })

  // The market service built its first snapshot and ranks when it was created (at start): no second build here.
  every('stats', d.statsRefreshS, () => {
    const ms = d.market.refreshStats()
    d.log.debug('stats and leaderboards rebuilt', { ms: Math.round(ms * 10) / 10 })
  }, false)
  every('rankings', d.rankingsRefreshS, () => d.market.refreshRanks(), false)

  return {
    status: () => Object.fromEntries(Object.entries(state).map(([k, v]) => [k, { last_run: v.lastRun, last_error: v.lastError }])),
    stop: () => timers.forEach(clearInterval),
  }
}
