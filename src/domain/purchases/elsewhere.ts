// Instances on one database: a request that meets a payment another instance is settling waits for that instance's
// verdict rather than sending anything itself. A payment decided by any instance wakes the requests here that wait.
import type { PaymentRow } from '../../store/payments.ts'
import { nowSeconds } from '../../lib/clock.ts'
import type { PurchaseDeps } from './deps.ts'
import type { ChainFate } from './fate.ts'

// While waiting: the row is read again this often (and at each notice of a decided payment), the chain every DECIDE_EVERY reads.
const POLL_MS = 250
const DECIDE_EVERY = 8
// A settlement under way touches its row at least this often (its start, its signed transaction, then at most the
// wait for its receipt): a pending row left longer by a live instance is no longer being settled there.
const SETTLING_SLACK_S = 30
// A request meeting a row its settler wrote this recently waits for it, even when that instance's heartbeat went
// unheard for a moment (a busy host runs late by more than the heartbeat's 1.5 s; a fresh-clone CI run showed it).
// The reconciler does not: a row left by an instance that is gone (a restart) is decided at once.
const JUST_WRITTEN_S = 5

export function otherInstances(d: PurchaseDeps, fate: ChainFate) {
  const waitS = d.waitS ?? 30
  const waitMs = waitS * 1000
  const waiting = new Set<() => void>()
  d.records.cluster?.hear('payments', () => {
    for (const wake of waiting) wake()
  })

  /**
   * Pending, and being settled by another instance: one that lives (heard in the heartbeats) and touched the row
   * recently (for a request: or that wrote it just now). Waited for, and left alone by the reconciler; decided from
   * the chain otherwise.
   */
  const settlingElsewhere = (row: PaymentRow, request = true) => {
    if (row.settler === null || row.settler === d.records.instance || !d.records.cluster) return false
    const age = nowSeconds() - row.updated_at
    return (request && age < JUST_WRITTEN_S) || (age < waitS + SETTLING_SLACK_S && d.records.cluster.alive(row.settler))
  }

  /** Asks `check` until it answers, at each decided payment heard of or every POLL_MS; undefined once the wait is over. */
  async function awaitDecision<T>(check: (attempt: number) => Promise<T | undefined>): Promise<T | undefined> {
    const deadline = performance.now() + waitMs
    for (let attempt = 1; ; attempt++) {
      const found = await check(attempt)
      if (found !== undefined || performance.now() >= deadline) return found
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          waiting.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, Math.min(POLL_MS, deadline - performance.now()))
        waiting.add(wake)
      })
    }
  }

  /**
   * Waits while `current()` is a pending payment another instance settles, until it is decided (or gone): true, or
   * false at the end of the wait. The chain is asked now and then too, in case nobody settles it any more.
   */
  async function settledElsewhere(current: () => Promise<PaymentRow | undefined>): Promise<boolean> {
    const over = await awaitDecision(async (attempt) => {
      let row = await current()
      if (row?.status === 'pending' && attempt % DECIDE_EVERY === 0) {
        await fate.decideSafely(row)
        row = await current()
      }
      return row?.status === 'pending' ? undefined : true
    })
    return over === true
  }

  return { settlingElsewhere, settledElsewhere }
}
export type OtherInstances = ReturnType<typeof otherInstances>
