// A large upload is written to a local file as it arrives, and imported once its body has been read whole: only
// then is its price known, and with it whether its content is stored sealed (paid) or in the clear (free). Importing
// while the body arrived meant guessing: a guess of "sealed" cost a free upload a second import (read back, opened,
// imported again), a guess of "clear" would leave a paid item's plain blocks in the store.
//
// The file holds the decoded content, in <data dir>/cache/uploads (owner-only, emptied at start): a request that
// fails or goes away leaves nothing in the content store, and its file is removed.
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { pieceQueue } from '../lib/piece-queue.ts'

/** How much a writer lets wait for the file: a few of the decoder's pieces. */
const WRITER_AHEAD_BYTES = 2 * 1024 * 1024
/** The file is read back this much at a time (four of the importer's 256 KiB chunks). */
const READ_BYTES = 1024 * 1024

/** An item written piece by piece as it arrives; the pieces are not all held at once. */
export interface ContentWriter {
  /** The next piece, taken as is (the caller must not reuse it). */
  push(piece: Uint8Array): void
  /** Resolves once there is room for more: await it between pushes to bound what waits in memory. */
  ready(): Promise<void> | undefined
  /** No more pieces: resolves once every piece is in the file. */
  end(): Promise<ArrivedContent>
  /** Gives up: the file is removed (resolves once it is, so an answer sent then finds nothing left). */
  abort(reason: Error): Promise<void>
}

/** An upload's content, whole in its file, not yet stored. */
export interface ArrivedContent {
  size: number
  /** The content, read from the file once (it is removed when the reading ends or stops). */
  pieces(): AsyncIterable<Uint8Array>
  /** Removes the file if it is still there; safe to call at any time and more than once. */
  discard(): void
}

export interface UploadSpool {
  writer(): ContentWriter
}

async function writeAll(file: FileHandle, piece: Uint8Array) {
  for (let at = 0; at < piece.byteLength; ) at += (await file.write(piece, at)).bytesWritten
}

async function* readBack(path: string, size: number): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r')
  try {
    for (let offset = 0; offset < size; ) {
      const chunk = new Uint8Array(Math.min(READ_BYTES, size - offset)) // a new one each time: the importer may keep it
      const { bytesRead } = await file.read(chunk, 0, chunk.byteLength, offset)
      if (bytesRead === 0) throw new Error(`upload file ${path}: ended at ${offset} of ${size} bytes`)
      offset += bytesRead
      yield bytesRead === chunk.byteLength ? chunk : chunk.subarray(0, bytesRead)
    }
  } finally {
    await file.close()
  }
}

export function uploadSpool(dir: string): UploadSpool {
  rmSync(dir, { recursive: true, force: true }) // files of uploads a stop or crash interrupted
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // Entries left over from a previous start are gone; the check keeps that true if rmSync ever stops recursing.
  if (readdirSync(dir).length > 0) throw new Error(`cannot empty ${dir}`)

  return {
    writer() {
      const path = join(dir, crypto.randomUUID())
      const discard = () => rmSync(path, { force: true })
      const queue = pieceQueue(WRITER_AHEAD_BYTES)
      let size = 0
      const written = (async () => {
        const file = await open(path, 'wx', 0o600)
        try {
          for await (const piece of queue.pieces) await writeAll(file, piece)
        } finally {
          await file.close()
        }
      })()
      // A failure is seen through end() (after abort() it is expected); the writer then takes no more pieces.
      const stopped = written.then(
        () => {},
        (error: Error) => (queue.endWithError(error), discard()),
      )
      return {
        push(piece) {
          size += piece.byteLength
          queue.push(piece)
        },
        // A failed write stops taking pieces: its failure ends the wait too.
        ready() {
          const room = queue.room()
          return (
            room &&
            Promise.race([
              room,
              written.then(
                () => {},
                () => {},
              ),
            ])
          )
        },
        async end() {
          queue.end()
          await written
          let consumed = false
          return {
            size,
            pieces() {
              if (consumed) throw new Error('an upload is read once')
              consumed = true
              return (async function* () {
                try {
                  yield* readBack(path, size)
                } finally {
                  discard()
                }
              })()
            },
            discard,
          }
        },
        abort(reason) {
          queue.endWithError(reason)
          return stopped
        },
      }
    },
  }
}
