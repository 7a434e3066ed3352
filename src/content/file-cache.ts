// Large items are served from plain files: Bun sends a file body with its Content-Length and without copying it
// through the heap (a streamed body would lose the length, an assembled one costs its size per download). Content
// is addressed by its hash, so a file is never stale; the oldest are removed past the budget.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

// A file used this recently is never removed: a response may still be about to open it.
const IN_USE_MS = 10 * 60_000

export interface FileCache {
  /** Path of a file holding the item, written from `source` on first use (concurrent callers share the write). */
  path(cid: string, size: number, source: () => AsyncIterable<Uint8Array>): Promise<string>
}

export function fileCache(dir: string, budgetBytes: number): FileCache {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const files = new Map<string, { size: number; usedAt: number }>() // least recently used first
  let total = 0
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name.includes('.tmp')) rmSync(path, { force: true }) // an interrupted write
    else {
      const size = statSync(path).size
      files.set(name, { size, usedAt: 0 })
      total += size
    }
  }
  const writing = new Map<string, Promise<string>>()

  function touch(cid: string, size: number) {
    const known = files.get(cid)
    if (known) files.delete(cid)
    else total += size
    files.set(cid, { size, usedAt: Date.now() })
    for (const [name, file] of files) {
      if (total <= budgetBytes || Date.now() - file.usedAt < IN_USE_MS) break
      rmSync(join(dir, name), { force: true })
      files.delete(name)
      total -= file.size
    }
  }

  async function write(cid: string, size: number, source: () => AsyncIterable<Uint8Array>): Promise<string> {
    const path = join(dir, cid)
    const temporary = `${path}.tmp-${crypto.randomUUID()}`
    const sink = Bun.file(temporary).writer({ highWaterMark: 1024 * 1024 })
    try {
      let written = 0
      for await (const chunk of source()) {
        sink.write(chunk)
        written += chunk.byteLength
        await sink.flush()
      }
      await sink.end()
      if (written !== size) throw new Error(`content ${cid}: read ${written} bytes, expected ${size}`)
      renameSync(temporary, path)
    } catch (error) {
      await Promise.resolve(sink.end()).catch(() => {})
      rmSync(temporary, { force: true })
      throw error
    }
    return path
  }

  return {
    async path(cid, size, source) {
      if (!/^[a-z0-9]+$/i.test(cid)) throw new Error('not a CID') // it becomes a file name
      if (files.has(cid)) {
        if (existsSync(join(dir, cid))) {
          touch(cid, size)
          return join(dir, cid)
        }
        total -= files.get(cid)!.size // removed by hand: written again
        files.delete(cid)
      }
      let pending = writing.get(cid)
      if (!pending) {
        pending = write(cid, size, source).finally(() => writing.delete(cid))
        writing.set(cid, pending)
      }
      const path = await pending
      touch(cid, size)
      return path
    },
  }
}
