// JSON lines on stdout; never secrets or signatures. A line written while a request is handled carries its id.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { LogLevel } from './config.ts'

/** The id of the request being handled (set by the request wrapper, edge/request-wrapper.ts, while requests are logged). */
export const requestContext = new AsyncLocalStorage<string>()

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export function logger(level: LogLevel) {
  const min = RANK[level]
  const write = (lvl: LogLevel, msg: string, fields: Record<string, unknown> = {}, always = false) => {
    if (RANK[lvl] < min && !always) return
    const requestId = requestContext.getStore()
    process.stdout.write(
      JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...(requestId ? { request_id: requestId } : {}), ...fields }) +
        '\n',
    )
  }
  return {
    /** Whether lines of this level are written (skip building them otherwise). */
    enabled: (lvl: LogLevel) => RANK[lvl] >= min,
    debug: (msg: string, f?: Record<string, unknown>) => write('debug', msg, f),
    info: (msg: string, f?: Record<string, unknown>) => write('info', msg, f),
    warn: (msg: string, f?: Record<string, unknown>) => write('warn', msg, f),
    error: (msg: string, f?: Record<string, unknown>) => write('error', msg, f),
    /** Start-up and shutdown lines: printed at every level (tools wait for "listening"). */
    announce: (msg: string, f?: Record<string, unknown>) => write('info', msg, f, true),
  }
}
export type Logger = ReturnType<typeof logger>
