// Seeded randomness for the benchmark data: the same seed gives the same market shape on every machine.

/** mulberry32: tiny, fast, and good enough for shaping test data (not for anything secret). */
export function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min: number, maxInclusive: number) => min + Math.floor(next() * (maxInclusive - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    hex32: () =>
      Math.floor(next() * 4294967296)
        .toString(16)
        .padStart(8, '0'),
    /** Fisher-Yates, in place. */
    shuffle<T>(items: T[]): T[] {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1))
        ;[items[i], items[j]] = [items[j]!, items[i]!]
      }
      return items
    },
  }
}
export type Rng = ReturnType<typeof rng>

/**
 * Zipf-like sampler over ranks 0..n-1 (rank 0 most likely): P(k) ∝ 1/(k+1)^s. A cumulative table and a binary
 * search keep a million draws well under a second.
 */
export function zipf(n: number, s: number, r: Rng): () => number {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s
  return () => {
    const x = r.next() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/**
 * Splits `total` items over `n` buckets with a power-law skew (bucket 0 largest), each bucket within [1, cap].
 * Used for feeds per owner (cap 10) and entries per feed (cap 1000), the product's own limits.
 */
export function spread(total: number, n: number, cap: number, s: number, r: Rng): number[] {
  if (total < n || total > n * cap) throw new Error(`cannot spread ${total} over ${n} buckets of 1..${cap}`)
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s)
  const sum = weights.reduce((a, b) => a + b, 0)
  const counts = weights.map((w) => Math.min(cap, Math.max(1, Math.round((w / sum) * total))))
  let diff = total - counts.reduce((a, b) => a + b, 0)
  // Settle the rounding error on random buckets that still have room.
  while (diff !== 0) {
    const k = r.int(0, n - 1)
    if (diff > 0 && counts[k]! < cap) counts[k]!++, diff--
    else if (diff < 0 && counts[k]! > 1) counts[k]!--, diff++
  }
  return counts
}
