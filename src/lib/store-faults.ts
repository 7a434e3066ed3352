// A store a request needs cannot be reached for now (its database restarting, its connections cut): the request is
// answered 503 with a Retry-After, the process keeps running, and the next request tries again. The adapters throw
// it; nothing above them knows which engine failed or how.
export class StoreUnavailable extends Error {}

/** Whether `error`, or an error it was wrapped around, is a store being unreachable. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof StoreUnavailable) return true
  }
  return false
}
