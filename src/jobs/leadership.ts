// Which instance runs the jobs that must run once per database (nonce cleanup, expiry, reconciliation, the ledger
// check): the one holding lease `trellis: leader`. The others try again every poll; when the leader dies, its session
// ends, PostgreSQL frees the lock, and the next try wins it. The embedded engine's lease is always granted: one
// process, always the leader.
import type { Logger } from '../log.ts'
import type { Lease } from '../store/records.ts'

const LEADER_LEASE = 'trellis: leader'

export interface Leadership {
  isLeader(): boolean
  /** Called each time this instance becomes the leader. */
  onGained(listener: () => void): void
  /** Gives the lease up (another instance may lead at its next try). */
  stop(): Promise<void>
}

/** Resolves after the first try, so a server knows at start whether it leads. */
export async function startLeadership(lease: (name: string) => Promise<Lease | null>, pollS: number, log: Logger): Promise<Leadership> {
  let held: Lease | null = null
  let trying = false
  let stopped = false
  const gained = new Set<() => void>()

  async function attempt() {
    if (held || trying || stopped) return
    trying = true
    try {
      const won = await lease(LEADER_LEASE)
      if (!won) return
      if (stopped) return await won.release()
      held = won
      log.info('leading: the once-per-database jobs run here')
      void won.lost.then(() => {
        if (held !== won) return
        held = null
        log.warn('leadership lost (the lease connection is gone): the once-per-database jobs stop here')
      })
      for (const listener of gained) listener()
    } catch (error) {
      log.warn('could not try for leadership', { error: String((error as Error).message ?? error).split('\n')[0] })
    } finally {
      trying = false
    }
  }

  await attempt()
  const timer = setInterval(attempt, pollS * 1000)
  timer.unref()
  return {
    isLeader: () => held !== null,
    onGained: (listener) => void gained.add(listener),
    async stop() {
      stopped = true
      clearInterval(timer)
      const was = held
      held = null
      await was?.release().catch(() => {})
    },
  }
}
