// Values made once by key and kept while they fit a budget of characters, the least recently read dropped first: for
// what never goes stale under its key (content under its CID). A value still being made is shared by every reader;
// one that fails is not kept, so it is made again next time.

export interface KeptPromises<V> {
  /** The value kept under `key`, else `make()`'s (kept once made, weighing `weigh(value)` characters; undefined: not kept). */
  get(key: string, make: () => Promise<V>, weigh: (value: V) => number | undefined): Promise<V>
}

export function keptPromises<V>(maxChars: number): KeptPromises<V> {
  const held = new Map<string, { value: Promise<V>; chars: number }>()
  let chars = 0

  function keep(key: string, weight: number) {
    const entry = held.get(key)
    if (entry === undefined) return
    entry.chars = weight
    chars += weight
    for (const [oldest, { chars: dropped }] of held) {
      if (chars <= maxChars) break
      held.delete(oldest)
      chars -= dropped
    }
  }

  return {
    get(key, make, weigh) {
      const entry = held.get(key)
      if (entry !== undefined) {
        held.delete(key) // the most recently read goes last
        held.set(key, entry)
        return entry.value
      }
      const value = make()
      held.set(key, { value, chars: 0 })
      value.then(
        (made) => {
          const weight = weigh(made)
          if (weight === undefined) held.delete(key)
          else keep(key, weight + key.length)
        },
        () => held.delete(key),
      )
      return value
    },
  }
}
