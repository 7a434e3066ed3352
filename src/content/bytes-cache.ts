// Content is addressed by its hash, so a cached copy can never be stale: small items are kept in memory, as stored
// (a sealed item's sealed bytes).

/** Items up to this size are cached (and served from memory); larger ones are served from files. */
export const CACHE_ITEM_MAX = 1024 * 1024
const CACHE_TOTAL_MAX = 64 * 1024 * 1024

export function bytesCache() {
  const items = new Map<string, Uint8Array>()
  let total = 0
  return {
    /** The bytes held. */
    get bytes() {
      return total
    },
    get(cid: string): Uint8Array | undefined {
      const hit = items.get(cid)
      if (hit) {
        items.delete(cid) // most recently used goes last
        items.set(cid, hit)
      }
      return hit
    },
    set(cid: string, bytes: Uint8Array) {
      if (bytes.byteLength > CACHE_ITEM_MAX || items.has(cid)) return
      items.set(cid, bytes)
      total += bytes.byteLength
      for (const [key, value] of items) {
        if (total <= CACHE_TOTAL_MAX) break
        items.delete(key)
        total -= value.byteLength
      }
    },
  }
}
