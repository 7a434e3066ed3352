// Which browser sessions stand, answered without work per request: a token verified once is not verified again (its
// signature cannot change; its expiry is kept and checked), and the sessions ended by sign-out are known in memory —
// on one process by its own sign-outs; on a shared database also by every instance's notice (`sessions`), loaded
// whole at the first read and again whenever the notices were interrupted. While notices may be going unheard (the
// change feed is not live), each read asks the records instead, as does a request that must read fresh (it carried
// the version of a write this instance has not heard of: lib/fresh-reads.ts); a sign-out's answer names its version.
import { nowSeconds } from '../lib/clock.ts'
import { mustReadFresh, wroteRecords } from '../lib/fresh-reads.ts'
import type { Records } from '../store/stores.ts'
import type { Session, SessionTokens } from './sessions.ts'

/** Verified tokens kept; past this, the oldest is verified again when it comes back. */
const MAX_VERIFIED = 20_000

export function liveSessions(tokens: SessionTokens, records: Records) {
  const verified = new Map<string, Session>() // insertion order: the oldest first
  const ended = new Map<string, number>() // session id → when its token expires (then it need not be remembered)
  let known: Promise<void> | null = null
  /** The learning that finished: the ended sessions are all in memory while it is still `known`. */
  let learned: Promise<void> | null = null

  const remember = (id: string, expiresAt: number) => {
    ended.set(id, expiresAt)
    if (ended.size % 1024 === 0) for (const [one, until] of ended) if (until <= nowSeconds()) ended.delete(one)
  }
  function learn(): Promise<void> {
    if (known) return known
    const learning: Promise<void> = records.read.endedSessions
      .standing(nowSeconds())
      .then((rows) => {
        for (const row of rows) remember(row.id, row.expires_at)
        learned = learning
      })
      .catch((error: unknown) => {
        known = null
        throw error
      })
    return (known = learning)
  }
  // Another instance's sign-out names its session; a null notice means some went unheard: learn them all again.
  records.cluster?.hear('sessions', (id) => {
    if (id === null) known = null
    else remember(id, nowSeconds() + tokens.ttlS)
  })

  async function verify(token: string): Promise<Session | null> {
    const kept = verified.get(token)
    if (kept) return kept
    const session = await tokens.verify(token)
    if (!session) return null
    if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!)
    verified.set(token, session)
    return session
  }

  return {
    /** The session a token stands for, unless it is not ours, has expired, or was ended by sign-out. */
    async get(token: string): Promise<Session | null> {
      const session = await verify(token)
      if (!session) return null
      if (session.expiresAt <= nowSeconds()) {
        verified.delete(token)
        return null
      }
      if (records.cluster && (!records.changes.live() || mustReadFresh()))
        return (await records.read.endedSessions.isEnded(session.id)) ? null : session
      await learn()
      return ended.has(session.id) ? null : session
    },

    /**
     * `get` without waiting, for the hot route: the session when everything needed is in memory (the token verified
     * before, unexpired, and the ended sessions known and heard live); undefined when only `get` can tell.
     */
    peek(token: string): Session | null | undefined {
      const session = verified.get(token)
      if (!session || learned === null || learned !== known || (records.cluster && !records.changes.live()) || mustReadFresh())
        return undefined
      if (session.expiresAt <= nowSeconds()) return null
      return ended.has(session.id) ? null : session
    },

    /** Sign-out: the token's session ends now (and is known ended here before the write's answer). */
    async end(token: string): Promise<void> {
      const session = await tokens.verify(token)
      if (!session) return
      await records.single((tx) => tx.endedSessions.end(session.id, session.expiresAt), { unkept: true })
      remember(session.id, session.expiresAt)
      wroteRecords() // not kept in the memo, but in every instance's memory: the answer names the version after it
    },
  }
}
