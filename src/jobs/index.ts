// In-process timers. For now: dropping spent and expired nonces.
import type { Db } from '../store/db.ts'
import type { Logger } from '../log.ts'
import { nonceStore } from '../store/nonces.ts'
import { nowSeconds } from '../lib/clock.ts'

interface JobState { lastRun: number | null; lastError: string | null }

export function startJobs(d: { db: Db; log: Logger }) {
  const nonces = nonceStore(d.db)
  const state: Record<string, JobState> = { 'nonce-cleanup': { lastRun: null, lastError: null } }
  const run = (name: string, job: () => void) => {
    try {
      job()
      state[name].lastError = null
    } catch (error) {
      state[name].lastError = String((error as Error).message)
      d.log.error('job failed', { job: name, error: state[name].lastError })
    }
    state[name].lastRun = nowSeconds()
  }
  const cleanup = () => run('nonce-cleanup', () => nonces.purgeExpiredBefore(nowSeconds() - 3600))
  cleanup()
  const timer = setInterval(cleanup, 10 * 60 * 1000)
  timer.unref()
  return {
    status: () => Object.fromEntries(Object.entries(state).map(([k, v]) => [k, { last_run: v.lastRun, last_error: v.lastError }])),
    stop: () => clearInterval(timer),
  }
}
