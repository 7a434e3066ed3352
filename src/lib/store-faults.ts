// The faults every records adapter maps its engine's errors to, so nothing above the adapters reads an engine's codes.
// Each adapter does its own mapping (store/sqlite/faults.ts, store/postgres/faults.ts); these are what they map to.

/**
 * A store a request needs cannot be reached for now (its database restarting, its connections cut): the request is
 * answered 503 with a Retry-After, the process keeps running, and the next request tries again.
 */
export class StoreUnavailable extends Error {}

/** Whether `error`, or an error it was wrapped around, is a store being unreachable. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof StoreUnavailable) return true
  }
  return false
}

/** A unique index refused a row (a duplicate key): the engine's error is its cause. */
export class UniqueViolation extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? 'a unique index refused the row', { cause })
  }
}

export const isUniqueViolation = (error: unknown): boolean => error instanceof UniqueViolation
