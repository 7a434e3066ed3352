// The queue between a large upload's decoder and the content import (src/lib/piece-queue.ts): pieces come out in
// order, at most the bound waits, and neither side is left waiting when the other stops.
import { describe, expect, test } from 'bun:test'
import { pieceQueue } from '../src/lib/piece-queue.ts'

const piece = (n: number, size = 100) => new Uint8Array(size).fill(n)

describe('pieceQueue', () => {
  test('a slow consumer: every piece in order, and the producer is held back at the bound', async () => {
    const queue = pieceQueue(300)
    const seen: number[] = []
    let mostWaiting = 0
    let waiting = 0
    const consumer = (async () => {
      for await (const p of queue.pieces) {
        waiting -= p.byteLength
        seen.push(p[0]!)
        await Bun.sleep(1)
      }
    })()
    for (let n = 0; n < 50; n++) {
      queue.push(piece(n))
      waiting += 100
      mostWaiting = Math.max(mostWaiting, waiting)
      const room = queue.room()
      if (room) await room
    }
    queue.end()
    await consumer
    expect(seen).toEqual(Array.from({ length: 50 }, (_, n) => n))
    expect(mostWaiting).toBeLessThanOrEqual(300 + 100) // the bound, plus the piece handed out but not yet counted here
    expect(mostWaiting).toBeGreaterThanOrEqual(300) // the producer did run ahead
    expect(queue.room()).toBeUndefined()
  })

  test('endWithError() ends the consumer with the error, even while it waits for a piece', async () => {
    const queue = pieceQueue(1000)
    const consumer = (async () => {
      const got: number[] = []
      for await (const p of queue.pieces) got.push(p[0]!)
      return got
    })()
    queue.push(piece(1))
    await Bun.sleep(5) // the consumer took it and now waits
    queue.endWithError(new Error('client went away'))
    await expect(consumer).rejects.toThrow('client went away')
  })

  test('a consumer that stops early releases a producer waiting for room, and later pushes are dropped', async () => {
    const queue = pieceQueue(100)
    queue.push(piece(1))
    queue.push(piece(2))
    const room = queue.room()
    expect(room).toBeInstanceOf(Promise)
    for await (const p of queue.pieces) {
      expect(p[0]).toBe(1)
      break // like an import that failed on its first block
    }
    await room // does not hang
    queue.push(piece(3))
    expect(queue.room()).toBeUndefined()
  })
})
