// What the operations asked of this server did, for the log and /metrics: an alert can fire when backups stop
// succeeding, or when verify finds problems.
import type { Logger } from '../log.ts'

type Result = 'ok' | 'problems' | 'error'
interface Runs {
  counts: Record<Result, number>
  lastSuccess: number | null
  lastSeconds: number
}

export function operationRecord(log: Pick<Logger, 'info' | 'warn'>) {
  const runs = new Map<string, Runs>()
  return {
    /** Runs an operation, counting its result: 'problems' when it ran but reports `ok: false` (verify). */
    async run<T>(command: string, work: () => Promise<T>): Promise<T> {
      const state =
        runs.get(command) ??
        runs.set(command, { counts: { ok: 0, problems: 0, error: 0 }, lastSuccess: null, lastSeconds: 0 }).get(command)!
      const started = performance.now()
      let result: Result = 'error'
      let error: string | undefined
      try {
        const value = await work()
        result = (value as { ok?: unknown } | null)?.ok === false ? 'problems' : 'ok'
        return value
      } catch (thrown) {
        error = (thrown as Error)?.message ?? String(thrown) // the command's caller gets it too, but the log is where it stays
        throw thrown
      } finally {
        state.lastSeconds = (performance.now() - started) / 1000
        state.counts[result]++
        if (result === 'ok') state.lastSuccess = Date.now() / 1000
        const ms = Math.round(state.lastSeconds * 1000)
        if (result === 'error') log.warn('operation ended', { command, result, error, ms })
        else log.info('operation ended', { command, result, ms })
      }
    },
    metrics(): string[] {
      const lines = [
        '# HELP trellis_operations_total Operations run by this server (trellis backup, verify, gc, ...), by result.',
        '# TYPE trellis_operations_total counter',
      ]
      for (const [command, s] of runs)
        for (const [result, n] of Object.entries(s.counts))
          lines.push(`trellis_operations_total{command="${command}",result="${result}"} ${n}`)
      lines.push(
        '# HELP trellis_operation_last_success_timestamp_seconds When each operation last succeeded.',
        '# TYPE trellis_operation_last_success_timestamp_seconds gauge',
      )
      for (const [command, s] of runs)
        if (s.lastSuccess !== null) lines.push(`trellis_operation_last_success_timestamp_seconds{command="${command}"} ${s.lastSuccess}`)
      lines.push(
        '# HELP trellis_operation_last_duration_seconds How long the last run of each operation took.',
        '# TYPE trellis_operation_last_duration_seconds gauge',
      )
      for (const [command, s] of runs) lines.push(`trellis_operation_last_duration_seconds{command="${command}"} ${s.lastSeconds}`)
      return lines
    },
  }
}
