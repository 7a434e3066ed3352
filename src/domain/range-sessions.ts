// Range sessions of access links: a media player reads an entry in many ranges, and the whole reading is one use.
// A session belongs to one link and one client (its address and User-Agent). The first range of a session counts
// one use and opens it; further ranges of the same client are free while the session lives. It ends after
// IDLE_MS without a range, or once its ranges add up to COPIES times the entry's size: a use never buys more than a
// few copies, so ranges cannot be turned into unlimited downloads. Sessions live in memory: a restart, another
// instance, or eviction when MAX_SESSIONS are open, only makes the next range count again (never less counted).

export const RANGE_SESSION_IDLE_MS = 30 * 60 * 1000
export const RANGE_SESSION_COPIES = 3
const MAX_SESSIONS = 10_000

interface Session {
  idleUntil: number
  bytesLeft: number
  /** The first range's count, while it is being committed: concurrent ranges of the same session wait for it. */
  opening?: Promise<boolean>
}

export function rangeSessions(o: { idleMs?: number; copies?: number; max?: number } = {}) {
  const idleMs = o.idleMs ?? RANGE_SESSION_IDLE_MS
  const copies = o.copies ?? RANGE_SESSION_COPIES
  const max = o.max ?? MAX_SESSIONS
  // Least recently used first (a touched session is moved to the end), so ended sessions are found at the front.
  const sessions = new Map<string, Session>()

  function place(key: string, session: Session, now: number) {
    sessions.delete(key)
    for (const [k, s] of sessions) {
      if (sessions.size < max && (s.opening || s.idleUntil > now)) break
      sessions.delete(k)
    }
    sessions.set(key, session)
  }

  return {
    /**
     * A range of `bytes` of an entry of `size` bytes, in session `key`: free inside a live session with bytes left,
     * else `count` (one use) decides, and opens a session when it counted. Resolves to whether it may be served.
     */
    async admit(key: string, bytes: number, size: number, count: () => Promise<boolean>): Promise<boolean> {
      for (;;) {
        const current = sessions.get(key)
        if (current?.opening) {
          await current.opening.catch(() => {})
          continue
        }
        const now = Date.now()
        if (current && current.idleUntil > now && current.bytesLeft >= bytes) {
          current.bytesLeft -= bytes
          current.idleUntil = now + idleMs
          place(key, current, now)
          return true
        }
        const fresh: Session = { idleUntil: 0, bytesLeft: 0 }
        fresh.opening = count()
        place(key, fresh, now)
        try {
          const counted = await fresh.opening
          if (counted) Object.assign(fresh, { idleUntil: Date.now() + idleMs, bytesLeft: copies * size - bytes })
          else if (sessions.get(key) === fresh) sessions.delete(key)
          return counted
        } catch (error) {
          if (sessions.get(key) === fresh) sessions.delete(key)
          throw error
        } finally {
          fresh.opening = undefined
        }
      }
    },
    /** A session is open (or opening) under `key`: its ranges may still be served when the link has no use left. */
    live(key: string): boolean {
      const session = sessions.get(key)
      return !!session && (!!session.opening || session.idleUntil > Date.now())
    },
    get size() {
      return sessions.size
    },
  }
}
export type RangeSessions = ReturnType<typeof rangeSessions>
