// The change feed of instances sharing one database. The triggers of migration 011 notify channel trellis_changes
// when a transaction that wrote memoized records commits, naming the instance that wrote (trellis.instance, set on
// each of its connections). Each instance listens: another's commit moves its version (so its memo drops what it
// read), its own are counted as they commit (read-your-writes, without waiting for the echo).
//
// A listening connection that dies says nothing, so each instance also notifies `hb:<instance>` every
// HEARTBEAT_MS and hears itself: once its own heartbeat is older than STALE_MS, other instances' commits may be going
// unheard, live() is false, and the memo keeps nothing until the echo is back. A re-subscription (Bun re-listens by
// itself after a lost connection) moves the version too: what was committed meanwhile was not heard.
//
// The same connection hears the cluster's other notices (Topic): a published snapshot, a decided payment. On the
// changes channel it also hears `at:<position>`, a database position told by an instance that answered a write (or
// asked where the database is): heard in commit order with the changes, read-your-writes keeps them (positions.ts).
import type { SQL } from 'bun'
import type { Changes, Topic } from '../records.ts'

export const CHANGES_CHANNEL = 'trellis_changes'
const TOPIC_CHANNELS: Record<Topic, string> = {
  snapshots: 'trellis_snapshots',
  payments: 'trellis_payments',
  takedowns: 'trellis_takedowns',
  sessions: 'trellis_sessions',
}
const HEARTBEAT_PREFIX = 'hb:'
export const POSITION_PREFIX = 'at:'
export const HEARTBEAT_MS = 500
export const STALE_MS = 1_500

export interface ChangeFeed {
  changes: Changes
  /** This instance committed a write: the version moves now. */
  committed(): void
  /** Whether `other` (an instance's id) was heard beating within STALE_MS (this one: whether it hears itself). */
  alive(other: string): boolean
  /** Notices on `topic` from any instance; null when (re)subscribed: whatever was sent meanwhile went unheard. */
  hear(topic: Topic, listener: (payload: string | null) => void): () => void
  /** The positions told on the changes channel (`at:…`, without the prefix), heard in commit order with the changes. */
  hearPositions(listener: (position: string) => void): () => void
  close(): Promise<void>
}

/**
 * Listens, and beats, through `client`: a client of its own (closed with the feed), so a pool busy with requests
 * never holds the heartbeat back. It opens two connections: the one Bun keeps for listening, and one for the beats.
 */
export async function listenForChanges(
  client: SQL,
  instance: string,
  clock: () => number = performance.now.bind(performance),
): Promise<ChangeFeed> {
  let version = 0
  let heardSelfAt = Number.NEGATIVE_INFINITY
  const listeners = new Set<() => void>()
  const positions = new Set<(position: string) => void>()
  const heartbeat = `${HEARTBEAT_PREFIX}${instance}`
  /** When each other instance's heartbeat was last heard. */
  const beatsOf = new Map<string, number>()

  const moved = () => {
    version++
    for (const listener of listeners) listener()
  }

  const subscription = await client.listen(
    CHANGES_CHANNEL,
    (payload) => {
      if (payload === heartbeat) heardSelfAt = clock()
      else if (payload.startsWith(HEARTBEAT_PREFIX)) beatsOf.set(payload.slice(HEARTBEAT_PREFIX.length), clock())
      else if (payload.startsWith(POSITION_PREFIX)) for (const listener of positions) listener(payload.slice(POSITION_PREFIX.length))
      else if (payload !== instance) moved()
    },
    () => {
      heardSelfAt = clock()
      moved()
    },
  )
  // A first beat before this instance serves anything: the others know it lives (a payment it settles is waited for).
  await client.notify(CHANGES_CHANNEL, heartbeat)
  const beat = setInterval(() => {
    client.notify(CHANGES_CHANNEL, heartbeat).catch(() => {}) // unanswered: the echo stops, and live() says so
  }, HEARTBEAT_MS)
  beat.unref()

  const hearing = Object.fromEntries(
    Object.keys(TOPIC_CHANNELS).map((topic) => [topic, new Set<(payload: string | null) => void>()]),
  ) as Record<Topic, Set<(payload: string | null) => void>>
  const topics = await Promise.all(
    Object.entries(TOPIC_CHANNELS).map(([topic, channel]) => {
      const listeners = hearing[topic as Topic]
      return client.listen(
        channel,
        (payload) => {
          for (const listener of listeners) listener(payload)
        },
        () => {
          for (const listener of listeners) listener(null)
        },
      )
    }),
  )

  return {
    changes: {
      version: () => version,
      live: () => clock() - heardSelfAt <= STALE_MS,
      onChange(listener) {
        listeners.add(listener)
        return () => listeners.delete(listener)
      },
    },
    committed: moved,
    alive(other) {
      const at = other === instance ? heardSelfAt : beatsOf.get(other)
      if (at !== undefined && clock() - at > STALE_MS * 4) beatsOf.delete(other) // gone: forgotten
      return at !== undefined && clock() - at <= STALE_MS
    },
    hear(topic, listener) {
      hearing[topic].add(listener)
      return () => hearing[topic].delete(listener)
    },
    hearPositions(listener) {
      positions.add(listener)
      return () => positions.delete(listener)
    },
    async close() {
      clearInterval(beat)
      await Promise.all([subscription, ...topics].map((s) => s.unlisten().catch(() => {})))
      await client.close().catch(() => {})
    },
  }
}
