// Range sessions (domain/range-sessions.ts): one count per session, shared by concurrent first ranges; a session
// ends when idle or when its byte budget is spent; eviction only ever makes a range count again.
import { describe, expect, test } from 'bun:test'
import { rangeSessions } from '../src/domain/range-sessions.ts'

function counter(outcome: () => boolean | Promise<boolean> = () => true) {
  const c = { calls: 0, count: async () => (c.calls++, await Bun.sleep(5), outcome()) }
  return c
}

describe('rangeSessions', () => {
  test('concurrent first ranges of one session count once; another key counts its own', async () => {
    const sessions = rangeSessions()
    const c = counter()
    const served = await Promise.all(Array.from({ length: 10 }, () => sessions.admit('a', 10, 1000, c.count)))
    expect(served).toEqual(Array(10).fill(true))
    expect(c.calls).toBe(1)
    expect(await sessions.admit('b', 10, 1000, c.count)).toBe(true)
    expect(c.calls).toBe(2)
  })

  test('the budget is copies × size: the range that would pass it counts a new use', async () => {
    const sessions = rangeSessions({ copies: 2 })
    const c = counter()
    for (let i = 0; i < 20; i++) expect(await sessions.admit('a', 100, 1000, c.count)).toBe(true) // 2000 bytes
    expect(c.calls).toBe(1)
    expect(await sessions.admit('a', 100, 1000, c.count)).toBe(true)
    expect(c.calls).toBe(2)
  })

  test('an idle session ends; a refused or failed count opens none and the next range counts again', async () => {
    const sessions = rangeSessions({ idleMs: 30 })
    const c = counter()
    await sessions.admit('a', 1, 1000, c.count)
    await sessions.admit('a', 1, 1000, c.count)
    expect(c.calls).toBe(1)
    await Bun.sleep(40)
    expect(sessions.live('a')).toBe(false)
    await sessions.admit('a', 1, 1000, c.count)
    expect(c.calls).toBe(2)

    const gone = counter(() => false)
    expect(await sessions.admit('b', 1, 1000, gone.count)).toBe(false)
    expect(sessions.live('b')).toBe(false)
    const refused = counter(() => {
      throw new Error('exhausted')
    })
    const waiting = [sessions.admit('c', 1, 1000, refused.count), sessions.admit('c', 1, 1000, refused.count)]
    for (const w of waiting) await expect(w).rejects.toThrow('exhausted') // the waiter tried its own count, refused too
    expect(refused.calls).toBe(2)
    expect(sessions.live('c')).toBe(false)
  })

  test('at most `max` sessions are kept: the least recently used is dropped and counts again', async () => {
    const sessions = rangeSessions({ max: 3 })
    const c = counter()
    for (const key of ['a', 'b', 'c']) await sessions.admit(key, 1, 1000, c.count)
    await sessions.admit('a', 1, 1000, c.count) // a is now the most recent
    await sessions.admit('d', 1, 1000, c.count) // drops b
    expect(sessions.size).toBe(3)
    expect(c.calls).toBe(4)
    await sessions.admit('a', 1, 1000, c.count)
    expect(c.calls).toBe(4)
    await sessions.admit('b', 1, 1000, c.count)
    expect(c.calls).toBe(5)
  })
})
