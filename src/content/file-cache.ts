// Large items are served from plain files: Bun sends a file body with its Content-Length and without copying it
// through the heap (a streamed body would lose the length, an assembled one costs its size per download). Content
// is addressed by its hash, so a file is never stale; the oldest are removed past the budget.
//
// A file is complete once in place: it is written under a temporary name, synced, renamed, and the directory synced,
// so a power loss leaves either no file or the whole one. A file of the wrong size (truncated some other way) is
// never served: it is written again from the store.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'

// A file used this recently is never removed: a response may still be about to open it.
const IN_USE_MS = 10 * 60_000

export interface FileCache {
  /**
   * Path of a file named `name` holding the item of `size` bytes, written from `source` on first use (concurrent
   * callers share the write). `name` is a CID, with an extension for a derived copy.
   */
  path(name: string, size: number, source: () => AsyncIterable<Uint8Array>): Promise<string>
}

const isFileName = (name: string) => /^[a-z0-9]+(\.[a-z]+)?$/i.test(name) && !name.includes('.tmp')

/** The size of the file at `path`, or null when there is none. */
function sizeOf(path: string): number | null {
  try {
    return statSync(path).size
  } catch {
    return null
  }
}

function syncDirectory(dir: string) {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function fileCache(dir: string, budgetBytes: number): FileCache {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const files = new Map<string, { size: number; usedAt: number }>() // least recently used first
  let total = 0
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name.includes('.tmp'))
      rmSync(path, { force: true }) // an interrupted write
    else {
      const size = statSync(path).size
      files.set(name, { size, usedAt: 0 })
      total += size
    }
  }
  const writing = new Map<string, Promise<string>>()

  function touch(name: string, size: number) {
    const known = files.get(name)
    if (known) files.delete(name)
    else total += size
    files.set(name, { size, usedAt: Date.now() })
    for (const [oldest, file] of files) {
      if (total <= budgetBytes || Date.now() - file.usedAt < IN_USE_MS) break
      rmSync(join(dir, oldest), { force: true })
      files.delete(oldest)
      total -= file.size
    }
  }

  async function write(name: string, size: number, source: () => AsyncIterable<Uint8Array>): Promise<string> {
    const path = join(dir, name)
    const temporary = `${path}.tmp-${crypto.randomUUID()}`
    const file = await open(temporary, 'w', 0o600)
    try {
      let written = 0
      for await (const chunk of source()) {
        for (let at = 0; at < chunk.byteLength; ) at += (await file.write(chunk, at)).bytesWritten
        written += chunk.byteLength
      }
      if (written !== size) throw new Error(`content ${name}: read ${written} bytes, expected ${size}`)
      await file.sync()
      await file.close()
      renameSync(temporary, path)
      syncDirectory(dir)
    } catch (error) {
      await file.close().catch(() => {})
      rmSync(temporary, { force: true })
      throw error
    }
    return path
  }

  return {
    async path(name, size, source) {
      if (!isFileName(name)) throw new Error('not a CID') // it becomes a file name
      const known = files.get(name)
      if (known) {
        if (sizeOf(join(dir, name)) === size) {
          touch(name, size)
          return join(dir, name)
        }
        total -= known.size // removed or damaged by hand: written again
        files.delete(name)
      }
      let pending = writing.get(name)
      if (!pending) {
        pending = write(name, size, source).finally(() => writing.delete(name))
        writing.set(name, pending)
      }
      const path = await pending
      touch(name, size)
      return path
    },
  }
}
