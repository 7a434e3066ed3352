// A queue of byte pieces between a producer that pushes synchronously and a consumer that iterates, with a bound on
// what may wait: the producer awaits room() between pushes. (it-pushable kept every piece pushed reachable
// until the end: nearly the whole upload held at once.)
export function pieceQueue(aheadBytes: number) {
  const waiting: Uint8Array[] = []
  let waitingBytes = 0
  let ended = false
  let failure: Error | null = null
  let wakeConsumer: (() => void) | null = null
  let wakeProducer: (() => void) | null = null

  const wake = () => {
    wakeConsumer?.()
    wakeConsumer = null
  }

  async function* pieces(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        if (failure) throw failure
        const piece = waiting.shift()
        if (piece) {
          waitingBytes -= piece.byteLength
          if (waitingBytes < aheadBytes) {
            wakeProducer?.()
            wakeProducer = null
          }
          yield piece
          continue
        }
        if (ended) return
        await new Promise<void>((resolve) => (wakeConsumer = resolve))
      }
    } finally {
      // The consumer stopped (done, failed or gave up): a waiting producer must not wait forever.
      ended = true
      wakeProducer?.()
      wakeProducer = null
    }
  }

  return {
    pieces: pieces(),
    push(piece: Uint8Array): void {
      if (ended) return
      waiting.push(piece)
      waitingBytes += piece.byteLength
      wake()
    },
    /** Resolves when there is room for more; undefined when there already is. */
    room(): Promise<void> | undefined {
      if (waitingBytes < aheadBytes || ended) return undefined
      return new Promise<void>((resolve) => (wakeProducer = resolve))
    },
    end(): void {
      ended = true
      wake()
    },
    /** Ends the queue with `error`: the consumer throws it, even while it waits for a piece. */
    endWithError(error: Error): void {
      failure = error
      waiting.length = 0
      waitingBytes = 0
      ended = true
      wake()
    },
  }
}
