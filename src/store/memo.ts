// Results of reads, kept until the records next change (`Changes.version()` moves). A result that also depends on
// the time says from when it is stale (`staleFrom`, server seconds), and is made again from then on.
//
// Bounded by the total length of what it holds: when full, the least recently used results make room, never refusing
// one. (Approximately: a read moves its result to the recent end only once it has drifted into the older half, so
// reading a hot result costs one comparison.)
//
// `peek` never computes: the hot path answers from it or falls through. `get` computes asynchronously and keeps the
// value only if the version did not move meanwhile (a write committed during the read may have made it stale before
// it was even kept) and the change feed is live.
//
// A request that must read fresh (lib/fresh-reads.ts: it carried a version this instance had not heard of in time)
// gets nothing it holds: each read is made for it alone, neither kept nor shared with other callers.
import { nowSeconds } from '../lib/clock.ts'
import { mustReadFresh } from '../lib/fresh-reads.ts'
import type { Changes } from './records.ts'

interface Held {
  value: unknown
  weight: number
  staleAt: number
  seq: number
}

type StaleFrom = (at: number) => void
type Size<T> = (value: T) => number

export function readMemo(changes: Pick<Changes, 'version' | 'live'>, maxChars = 32 * 1024 * 1024, now: () => number = nowSeconds) {
  let version = -1
  const held = new Map<string, Held>() // least recently used first
  let chars = 0
  let seq = 0 // counts insertions and moves: seq - entry.seq is about how far from the recent end an entry is
  const counts = { hits: 0, misses: 0 }
  const computing = new Map<string, { version: number; value: Promise<unknown> }>()

  function current(): number {
    const n = changes.live() ? changes.version() : -2
    if (n !== version || n === -2) {
      version = n
      if (held.size > 0) held.clear()
      chars = 0
    }
    return n
  }

  function found(key: string): Held | undefined {
    const entry = held.get(key)
    if (entry === undefined || (entry.staleAt !== Infinity && now() >= entry.staleAt)) return undefined
    if (seq - entry.seq > held.size >> 1) {
      held.delete(key)
      held.set(key, entry)
      entry.seq = ++seq
    }
    return entry
  }

  function keep(key: string, value: unknown, weight: number, staleAt: number) {
    const old = held.get(key)
    if (old !== undefined) {
      held.delete(key)
      chars -= old.weight
    }
    if (weight > maxChars) return
    while (chars + weight > maxChars) {
      const [oldest, entry] = held.entries().next().value!
      held.delete(oldest)
      chars -= entry.weight
    }
    held.set(key, { value, weight, staleAt, seq: ++seq })
    chars += weight
  }

  /** The result held for `key`, if any; never computes. */
  function peek<T>(key: string): T | undefined {
    if (mustReadFresh()) return undefined
    current()
    const entry = found(key)
    if (entry) counts.hits++
    return entry?.value as T | undefined
  }

  /** `size`: about how many characters the value holds (a string's own length by default). */
  function cached<T = string>(key: string, compute: (staleFrom: StaleFrom) => T, size: Size<T> = (v) => String(v).length): T {
    if (mustReadFresh()) return (counts.misses++, compute(() => {}))
    const at = current()
    const entry = found(key)
    if (entry) {
      counts.hits++
      return entry.value as T
    }
    counts.misses++
    let staleAt = Infinity
    const value = compute((at) => void (at < staleAt && (staleAt = at)))
    if (at >= 0) keep(key, value, size(value) + key.length, staleAt)
    return value
  }

  /** As `cached`, for a result read asynchronously; callers asking for the same key meanwhile share one read. */
  async function get<T = string>(
    key: string,
    compute: (staleFrom: StaleFrom) => Promise<T>,
    size: Size<T> = (v) => String(v).length,
  ): Promise<T> {
    if (mustReadFresh()) return (counts.misses++, compute(() => {}))
    const before = current()
    const entry = found(key)
    if (entry) {
      counts.hits++
      return entry.value as T
    }
    const pending = computing.get(key)
    if (pending && pending.version === before) return pending.value as Promise<T>
    counts.misses++
    let staleAt = Infinity
    const value = compute((from) => void (from < staleAt && (staleAt = from)))
    computing.set(key, { version: before, value })
    try {
      const result = await value
      if (before >= 0 && current() === before) keep(key, result, size(result) + key.length, staleAt)
      return result
    } finally {
      if (computing.get(key)?.value === value) computing.delete(key)
    }
  }

  /** What it holds and how often it was asked (for tests and /metrics). */
  const stats = () => ({ entries: held.size, chars, ...counts })
  return Object.assign(cached, { peek, get, stats })
}
export type ReadMemo = ReturnType<typeof readMemo>
