// One process per data directory (a server, or a command on a stopped server's data), claimed before any store is
// opened. The claim is an exclusive flock(2) on trellis.lock, held open for the life of the process: the kernel
// decides between two processes starting at the same instant, and drops the lock of one that dies, however it dies.
// trellis.pid names the holder for the other commands (lockHolder); it is written once the lock is held.
// Where libc's flock cannot be had, the pid file alone is the claim (created exclusively; a dead holder's is taken
// over), which two processes starting at the same instant can both win.
import { dlopen, FFIType, read } from 'bun:ffi'
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants } from 'node:os'
import { join } from 'node:path'

export class DataDirInUse extends Error {}

const LOCK_FILE = 'trellis.lock' // never removed: removing it would let a second process lock a new file
const PID_FILE = 'trellis.pid'

type Attempt = 'locked' | 'held' | 'unsupported'

/** flock(fd, LOCK_EX | LOCK_NB) from libc, or null where libc cannot be opened. */
const exclusiveLock = ((): ((fd: number) => Attempt) | null => {
  const libraries =
    process.platform === 'darwin'
      ? ['libSystem.B.dylib']
      : process.platform === 'linux'
        ? ['libc.so.6', `libc.musl-${process.arch === 'x64' ? 'x86_64' : 'aarch64'}.so.1`]
        : []
  const errnoSymbol = process.platform === 'darwin' ? '__error' : '__errno_location'
  for (const library of libraries) {
    try {
      const libc = dlopen(library, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [errnoSymbol]: { args: [], returns: FFIType.ptr },
      })
      const errno = libc.symbols[errnoSymbol] as () => Parameters<typeof read.i32>[0]
      const LOCK_EX = 2
      const LOCK_NB = 4
      return (fd) => {
        if (libc.symbols.flock(fd, LOCK_EX | LOCK_NB) === 0) return 'locked'
        const code = read.i32(errno(), 0) // read at once: nothing in between makes a system call
        // 'unsupported' is e.g. ENOLCK, as some network filesystems answer.
        return code === constants.errno.EWOULDBLOCK || code === constants.errno.EAGAIN ? 'held' : 'unsupported'
      }
    } catch {
      // not this libc: try the next
    }
  }
  return null
})()

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The pid of the live process holding the data directory, or null. */
export function lockHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim())
    return alive(pid) ? pid : null
  } catch {
    return null
  }
}

const inUse = (dataDir: string) => {
  const holder = lockHolder(dataDir)
  return new DataDirInUse(`the data directory ${dataDir} is in use by another trellis process${holder === null ? '' : ` (pid ${holder})`}`)
}

/** Claims the data directory for this process; throws DataDirInUse when another has it. Returns the release. */
export function lockDataDir(dataDir: string): () => void {
  if (exclusiveLock) {
    const fd = openSync(join(dataDir, LOCK_FILE), 'a', 0o600)
    const attempt = exclusiveLock(fd)
    if (attempt === 'locked') {
      writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 })
      return () => {
        rmSync(join(dataDir, PID_FILE), { force: true }) // before the lock goes: the next holder's pid file stays
        closeSync(fd)
      }
    }
    closeSync(fd)
    if (attempt === 'held') throw inUse(dataDir)
  }
  return lockPidFile(dataDir)
}

function lockPidFile(dataDir: string): () => void {
  const path = join(dataDir, PID_FILE)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
      return () => rmSync(path, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      if (lockHolder(dataDir) !== null) throw inUse(dataDir)
      rmSync(path, { force: true }) // stale: its process is gone
    }
  }
  throw new DataDirInUse(`could not lock the data directory ${dataDir}`)
}
