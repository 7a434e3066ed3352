// In-process timers: nonce cleanup, paid→free expiry, reconciliation of interrupted payments, the ledger check,
// leaderboard snapshots and wallet ranks (built on a long-reads thread), webhooks and WebSub (leases, verifications,
// distribution). Each runs once at start, then on its
// period; a job never overlaps itself. All run once per database: on the leader only (leadership.ts), and at once
// when an instance becomes it; the others install the snapshots it publishes (snapshots.ts). Jobs get services and
// threads, built by app.ts; they open nothing.
import type { Logger } from '../log.ts'
import type { AuthService } from '../domain/auth.ts'
import type { EntryService } from '../domain/entries.ts'
import type { PassService } from '../domain/passes.ts'
import type { PurchaseService } from '../domain/purchases.ts'
import type { StatsService } from '../domain/stats-service.ts'
import type { WebhookService } from '../domain/webhooks.ts'
import type { WebsubService } from '../domain/websub.ts'
import type { ChallengeCounter } from '../domain/challenges.ts'
import type { AuditReport, LedgerAudit } from '../domain/ledger-audit.ts'
import { nowSeconds } from '../lib/clock.ts'
import type { LongReads } from './long-reads.ts'
import type { Leadership } from './leadership.ts'
import type { SnapshotFollower } from './snapshots.ts'
import type { Cluster } from '../store/records.ts'
import { traced } from '../lib/traces.ts'

const SQL_CHECK_S = 3_600
/** How often the 402 challenges counted in memory are written: every instance its own (not the leader's only). */
const CHALLENGE_FLUSH_S = 5

interface JobState {
  lastRun: number | null
  lastError: string | null
  running: boolean
  ok: number
  failed: number
  seconds: number
  lastSeconds: number
}

export interface Jobs {
  status(): Record<string, { last_run: number | null; last_error: string | null }>
  /** Prometheus lines of the jobs' own gauges. */
  metrics(): string[]
  stop(): Promise<void>
  /** The first runs of the jobs that only write records (nonce cleanup, expiry): a server serves once they are done. */
  ready: Promise<void>
  /** Runs the jobs bound to a deadline (expiries) now: the test clock moved past one (test-hooks.ts). */
  deadlinesMoved(): Promise<void>
}

/** Runs by job and result, and the time they took. */
function jobMetrics(state: Record<string, JobState>): string[] {
  const lines = ['# HELP trellis_job_runs_total Runs of each periodic job, by result.', '# TYPE trellis_job_runs_total counter']
  for (const [job, s] of Object.entries(state))
    lines.push(
      `trellis_job_runs_total{job="${job}",result="ok"} ${s.ok}`,
      `trellis_job_runs_total{job="${job}",result="error"} ${s.failed}`,
    )
  lines.push('# HELP trellis_job_duration_seconds_total Time spent in each job.', '# TYPE trellis_job_duration_seconds_total counter')
  for (const [job, s] of Object.entries(state)) lines.push(`trellis_job_duration_seconds_total{job="${job}"} ${s.seconds}`)
  lines.push(
    '# HELP trellis_job_last_duration_seconds How long the last run of each job took.',
    '# TYPE trellis_job_last_duration_seconds gauge',
  )
  for (const [job, s] of Object.entries(state)) lines.push(`trellis_job_last_duration_seconds{job="${job}"} ${s.lastSeconds}`)
  return lines
}

/**
 * Whether this instance leads, so an alert can tell a cluster with no leader (no expiry, no ledger check, no webhooks)
 * or two; and the webhook attempts, which only the leader sends.
 */
function leaderMetrics(leader: boolean, webhooks: ReturnType<WebhookService['counts']>): string[] {
  return [
    '# HELP trellis_leader 1 when this instance runs the once-per-database jobs (holds the leader lease), else 0.',
    '# TYPE trellis_leader gauge',
    `trellis_leader ${leader ? 1 : 0}`,
    '# HELP trellis_webhook_attempts_total Webhook delivery attempts this instance made, by result (failed: no 2xx in time).',
    '# TYPE trellis_webhook_attempts_total counter',
    `trellis_webhook_attempts_total{result="delivered"} ${webhooks.delivered}`,
    `trellis_webhook_attempts_total{result="failed"} ${webhooks.failed}`,
    '# HELP trellis_webhook_deliveries_given_up_total Webhook deliveries given up after a day of failed attempts.',
    '# TYPE trellis_webhook_deliveries_given_up_total counter',
    `trellis_webhook_deliveries_given_up_total ${webhooks.given_up}`,
  ]
}

export interface JobServices {
  log: Logger
  auth: AuthService
  entries: EntryService
  passes: PassService
  purchases: PurchaseService
  stats: StatsService
  ledgerAudit: LedgerAudit
  webhooks: WebhookService
  websub: WebsubService
  /** The 402 challenges this instance served, written every CHALLENGE_FLUSH_S (and at stop). */
  challenges: ChallengeCounter
  /** Leaderboards and ranks are built on one thread, the ledger's SQL checks on another: neither waits for the other. */
  threads: { boards: LongReads; checks: LongReads }
  leadership: Leadership
  snapshots: SnapshotFollower
  /** Instances sharing one database: their rate-limit windows are swept here. */
  cluster: Cluster | null
  statsRefreshS: number
  rankingsRefreshS: number
  reconcileS: number
  ledgerCheckS: number
}

export function startJobs(d: JobServices): Jobs {
  const state: Record<string, JobState> = {}
  const timers: ReturnType<typeof setInterval>[] = []

  const leaderRuns: Array<() => Promise<void>> = []

  /** `once`: a once-per-database job, run by the leader only. */
  function every(name: string, seconds: number, job: () => unknown | Promise<unknown>, { once = false } = {}) {
    state[name] = { lastRun: null, lastError: null, running: false, ok: 0, failed: 0, seconds: 0, lastSeconds: 0 }
    const run = async () => {
      const s = state[name]
      if (s.running || (once && !d.leadership.isLeader())) return
      s.running = true
      const started = performance.now()
      try {
        // A run is a trace of its own when traces are on (a root span: no request asked for it).
        await traced(`job ${name}`, { job: name }, async () => await job())
        s.lastError = null
        s.ok++
      } catch (error) {
        s.lastError = String((error as Error).message).split('\n')[0]
        s.failed++
        d.log.error('job failed', { job: name, error: s.lastError })
      } finally {
        s.lastSeconds = (performance.now() - started) / 1000
        s.seconds += s.lastSeconds
        s.lastRun = nowSeconds()
        s.running = false
      }
    }
    if (once) leaderRuns.push(run)
    const timer = setInterval(run, seconds * 1000)
    timer.unref()
    timers.push(timer)
    return run()
  }

  // An early access or a pass that ended while the server was down is over before the first request is answered.
  const deadlineJobs = [
    every('entry-expiry', 30, () => d.entries.endEarlyAccess(nowSeconds()), { once: true }),
    every('pass-expiry', 30, () => d.passes.endExpired(nowSeconds()), { once: true }),
    every('websub-expiry', 30, () => d.websub.expire(nowSeconds()), { once: true }),
  ]
  const deadlineRuns = leaderRuns.slice(-deadlineJobs.length)
  const ready = Promise.all([
    every('nonce-cleanup', 600, () => d.auth.purgeNonces(nowSeconds() - 3600), { once: true }),
    every('ended-session-cleanup', 3600, () => d.auth.purgeEndedSessions(nowSeconds() - 60), { once: true }),
    ...deadlineJobs,
  ]).then(() => {})
  const cluster = d.cluster
  if (cluster) every('rate-window-cleanup', 60, () => cluster.sweepRateWindows(), { once: true })
  every(
    'payment-reconciliation',
    d.reconcileS,
    async () => {
      const counts = await d.purchases.reconcilePending()
      if (counts.settled || counts.failed) d.log.info('payments reconciled', counts)
    },
    { once: true },
  )

  // The ledger against the chain: what was added since the last check (the first check at start reads the rest).
  let audit: { report: AuditReport; at: number } | null = null
  let provenTotal = 0
  // The SQL checks recompute every tally from the whole ledger (about a minute of one core at 1M rows): on a
  // thread of their own, so leaderboards are never queued behind them, and at most once per SQL_CHECK_S.
  let sqlChecked: { at: number; problems: AuditReport['problems'] } | null = null
  const inconsistencies = async () => {
    if (sqlChecked === null || nowSeconds() - sqlChecked.at >= Math.max(SQL_CHECK_S, d.ledgerCheckS)) {
      sqlChecked = { at: nowSeconds(), problems: (await d.threads.checks.run({ checks: true }, nowSeconds())).problems! }
    }
    return sqlChecked.problems
  }
  every(
    'ledger-check',
    d.ledgerCheckS,
    async () => {
      const report = await d.ledgerAudit.run({ full: false, inconsistencies })
      provenTotal += report.proven
      audit = { report, at: nowSeconds() }
      if (report.problems.length > 0) d.log.error('the ledger does not match the chain', { problems: report.problems })
      // An RPC outage proves nothing either way: the unchecked rows are checked again at the next run.
      if (report.unreadable)
        d.log.warn('could not check the ledger against the chain: the RPC is not readable', {
          cause: report.unreadable.cause,
          unchecked: report.unreadable.subjects,
        })
    },
    { once: true },
  )

  // Built and published on the boards thread; until the first build the server serves the last one published.
  every(
    'stats',
    d.statsRefreshS,
    async () => {
      const result = await d.threads.boards.run({ boards: true }, nowSeconds())
      d.snapshots.built('boards', result.boardsGeneration!, result.boards!)
      d.log.debug('stats and leaderboards rebuilt', { ms: Math.round(result.ms * 10) / 10 })
    },
    { once: true },
  )
  every(
    'rankings',
    d.rankingsRefreshS,
    async () => {
      const result = await d.threads.boards.run({ ranks: true }, nowSeconds())
      d.snapshots.built('ranks', result.ranksGeneration!, result.ranks!)
      d.log.debug('wallet ranks rebuilt', { ms: Math.round(result.ms * 10) / 10 })
    },
    { once: true },
  )

  // Each second: a sale's webhook leaves about a second after the sale, never inside the paid request.
  every('webhooks', 1, () => d.webhooks.deliverDue(), { once: true })
  every('webhook-log-cleanup', 3_600, () => d.webhooks.forgetOld(), { once: true })
  // WebSub: intents verified and new entries told to subscribers, each second, as webhooks are.
  every('websub-verification', 1, () => d.websub.verifyDue(), { once: true })
  every('websub-distribution', 1, () => d.websub.deliverDue(), { once: true })
  // Each instance's own counts of the 402s it served, in one transaction every few seconds.
  every('challenge-counts', CHALLENGE_FLUSH_S, () => d.challenges.flush())

  d.leadership.onGained(() => void Promise.all(leaderRuns.map((run) => run())))

  return {
    ready,
    deadlinesMoved: () => Promise.all(deadlineRuns.map((run) => run())).then(() => {}),
    status: () => Object.fromEntries(Object.entries(state).map(([k, v]) => [k, { last_run: v.lastRun, last_error: v.lastError }])),
    metrics: () => [
      ...jobMetrics(state),
      ...leaderMetrics(d.leadership.isLeader(), d.webhooks.counts()),
      ...(audit === null
        ? []
        : [
            '# HELP trellis_ledger_problems Rules broken at the last check of the ledger against the chain ' +
              '(0 = the ledger equals the chain).',
            '# TYPE trellis_ledger_problems gauge',
            `trellis_ledger_problems ${audit.report.problems.length}`,
            '# HELP trellis_ledger_unreadable 1 when the last check could not read the chain (RPC down): ' +
              'rows went unchecked, nothing was found wrong.',
            '# TYPE trellis_ledger_unreadable gauge',
            `trellis_ledger_unreadable ${audit.report.unreadable ? 1 : 0}`,
            '# HELP trellis_ledger_proven_total Ledger rows proven by their on-chain transfer since start.',
            '# TYPE trellis_ledger_proven_total counter',
            `trellis_ledger_proven_total ${provenTotal}`,
            '# HELP trellis_ledger_last_check_timestamp_seconds When the ledger was last checked against the chain.',
            '# TYPE trellis_ledger_last_check_timestamp_seconds gauge',
            `trellis_ledger_last_check_timestamp_seconds ${audit.at}`,
          ]),
    ],
    async stop() {
      timers.forEach(clearInterval)
      await d.challenges
        .flush()
        .catch((error: unknown) => d.log.warn('could not write the last challenge counts', { error: String(error) }))
    },
  }
}
