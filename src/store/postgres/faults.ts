// PostgreSQL's errors as the faults of lib/store-faults.ts: a failure of Bun's SQL client that means the database
// could not be reached or dropped the connection (a restart, a failover, a killed backend) is StoreUnavailable; a
// duplicate key (SQLSTATE 23505, never the message text) is UniqueViolation; any other refusal stays as it is.
import { StoreUnavailable, UniqueViolation } from '../../lib/store-faults.ts'

const CLIENT_CODES = new Set([
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_FAILED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
  'ERR_POSTGRES_IDLE_TIMEOUT',
  'ERR_POSTGRES_LIFETIME_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
])
/** SQLSTATEs: the server shutting down or killing the session, starting up, or out of connections. */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300'])

export function isConnectionLoss(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown }
  if (typeof code === 'string' && CLIENT_CODES.has(code)) return true
  return typeof errno === 'string' && (SERVER_STATES.has(errno) || errno.startsWith('08'))
}

/**
 * `error` as thrown on: a lost connection as StoreUnavailable, a duplicate key as UniqueViolation (the original kept as
 * its cause), anything else as it is.
 */
export function postgresFault(error: unknown): unknown {
  if ((error as { errno?: unknown })?.errno === '23505') return new UniqueViolation(error)
  if (!isConnectionLoss(error)) return error
  const reason = ((error as Error).message ?? String(error)).split('\n', 1)[0]
  return new StoreUnavailable(`PostgreSQL cannot be reached: ${reason}`, { cause: error })
}

/** `work`, with a lost connection thrown as StoreUnavailable. */
export async function reaching<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw postgresFault(error)
  }
}
