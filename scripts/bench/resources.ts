// CPU time and memory of what the benchmark measures, from /proc: the server (one process, its threads included) and,
// on PostgreSQL, the cluster (the postmaster and every process it started: backends, checkpointer, WAL writer, ...).
//
// CPU: utime + stime of each live process, plus the postmaster's cutime + cstime, which hold the time of the children it
// has reaped (a backend whose connection closed), so a difference of two readings counts every process that ran
// between them. Memory: the sum of VmRSS counts the shared buffers once in every backend that touched them (so it
// overstates); the sum of Pss (/proc/<pid>/smaps_rollup: each shared page divided among the processes mapping it) is
// the honest total. Reading another user's smaps_rollup needs root or the same user; Pss is null where it was refused.
import { readdirSync, readFileSync } from 'node:fs'
import type { SQL } from 'bun'

/** Clock ticks per second of /proc/<pid>/stat's times. */
const TICKS = (() => {
  const out = Bun.spawnSync(['getconf', 'CLK_TCK'], { stdout: 'pipe', stderr: 'ignore' }).stdout.toString().trim()
  return Number(out) > 0 ? Number(out) : 100
})()

interface Stat {
  ppid: number
  utime: number
  stime: number
  cutime: number
  cstime: number
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces: the fields after its closing one are fixed.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { ppid: Number(f[1]), utime: Number(f[11]), stime: Number(f[12]), cutime: Number(f[13]), cstime: Number(f[14]) }
  } catch {
    return null
  }
}

/** A `Key:  N kB` line of a /proc file, in bytes: null when absent (a zombie has no memory lines) or the process is gone. */
function kiB(path: string, key: string): number | null {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(path, 'utf8'))
    return m ? Number(m[1]) * 1024 : null
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EPERM') throw error
    return null
  }
}

/** What a set of processes holds at one moment; cpu_s is cumulative (compare two readings). */
export interface Usage {
  cpu_s: number
  rss_bytes: number
  /** Null when some process's smaps_rollup could not be read. */
  pss_bytes: number | null
  processes: number
}

function usageOf(pids: number[], reapedTicks: number): Usage {
  let ticks = reapedTicks
  let rss = 0
  let pss: number | null = 0
  let processes = 0
  for (const pid of pids) {
    const s = stat(pid)
    if (!s) continue // gone meanwhile: its time is in its parent's cutime once reaped
    ticks += s.utime + s.stime
    const resident = kiB(`/proc/${pid}/status`, 'VmRSS')
    if (resident === null) continue // exited, not reaped yet: no memory left
    processes++
    rss += resident
    try {
      pss = pss === null ? null : pss + (kiB(`/proc/${pid}/smaps_rollup`, 'Pss') ?? 0)
    } catch {
      pss = null // not ours to read (another user's process, and we are not root)
    }
  }
  return { cpu_s: ticks / TICKS, rss_bytes: rss, pss_bytes: pss, processes }
}

/** One process (the server): its own CPU time, threads included, and its memory. */
export function processUsage(pid: number): Usage {
  const s = stat(pid)
  return usageOf(s ? [pid] : [], s ? s.cutime + s.cstime : 0)
}

/** The postmaster and its children, as they are now. */
export function clusterUsage(postmaster: number): Usage {
  const root = stat(postmaster)
  if (!root) return { cpu_s: 0, rss_bytes: 0, pss_bytes: null, processes: 0 }
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== postmaster && stat(pid)?.ppid === postmaster)
  return usageOf([postmaster, ...children], root.cutime + root.cstime)
}

/**
 * The postmaster of the cluster a connection reaches, when it runs on this machine (a backend's parent), else null
 * (a cluster elsewhere: its CPU and memory are not ours to read).
 */
export async function postmasterOf(sql: SQL): Promise<number | null> {
  const [{ pid }] = await sql.unsafe('SELECT pg_backend_pid() AS pid')
  const backend = stat(Number(pid))
  if (!backend) return null
  try {
    const comm = readFileSync(`/proc/${backend.ppid}/comm`, 'utf8').trim()
    return comm === 'postgres' || comm === 'postmaster' ? backend.ppid : null
  } catch {
    return null
  }
}

const difference = (from: Usage, to: Usage) => ({
  cpu_s: to.cpu_s - from.cpu_s,
  rss_bytes: to.rss_bytes,
  pss_bytes: to.pss_bytes,
  processes: to.processes,
})

/**
 * Readings of the server and the cluster at the end of each named phase, and the peaks of their memory sampled every
 * second meanwhile. `phases`: each phase's CPU seconds and the memory at its end.
 */
export function resourceLog(server: () => number | null, postmaster: number | null) {
  const read = () => {
    const pid = server()
    return { server: pid === null ? null : processUsage(pid), cluster: postmaster === null ? null : clusterUsage(postmaster) }
  }
  let last = read()
  let lapFrom = last
  /** Per-route CPU inside a phase (see lap). */
  const laps: Array<{ name: string; server_cpu_s: number | null; postgres_cpu_s: number | null }> = []
  const phases: Array<{ phase: string; server: ReturnType<typeof difference> | null; postgres: ReturnType<typeof difference> | null }> = []
  /** postgres_pss_bytes: null when some reading could not see it. */
  const peak = { server_rss_bytes: 0, postgres_rss_bytes: 0, postgres_pss_bytes: 0 as number | null, postgres_processes: 0 }
  const sample = (reading: ReturnType<typeof read>) => {
    peak.server_rss_bytes = Math.max(peak.server_rss_bytes, reading.server?.rss_bytes ?? 0)
    if (!reading.cluster) return
    peak.postgres_rss_bytes = Math.max(peak.postgres_rss_bytes, reading.cluster.rss_bytes)
    peak.postgres_processes = Math.max(peak.postgres_processes, reading.cluster.processes)
    peak.postgres_pss_bytes =
      peak.postgres_pss_bytes === null || reading.cluster.pss_bytes === null
        ? null
        : Math.max(peak.postgres_pss_bytes, reading.cluster.pss_bytes)
  }
  const timer = setInterval(() => sample(read()), 1000)
  return {
    /** Ends a phase: the CPU used since the previous mark (the server's from 0 when it started inside the phase). */
    mark(phase: string) {
      const now = read()
      sample(now)
      const zero: Usage = { cpu_s: 0, rss_bytes: 0, pss_bytes: 0, processes: 0 }
      phases.push({
        phase,
        server: now.server && difference(last.server ?? zero, now.server),
        postgres: now.cluster && difference(last.cluster ?? zero, now.cluster),
      })
      last = now
      lapFrom = now
    },
    /** The CPU used since the previous lap or mark, kept under `name` (phases are not ended by it). */
    lap(name: string) {
      const now = read()
      laps.push({
        name,
        server_cpu_s: now.server && lapFrom.server ? now.server.cpu_s - lapFrom.server.cpu_s : null,
        postgres_cpu_s: now.cluster && lapFrom.cluster ? now.cluster.cpu_s - lapFrom.cluster.cpu_s : null,
      })
      lapFrom = now
    },
    stop() {
      clearInterval(timer)
      const sum = (pick: (p: (typeof phases)[number]) => { cpu_s: number } | null) =>
        phases.reduce((total, p) => total + (pick(p)?.cpu_s ?? 0), 0)
      return {
        phases,
        /** Each read route's measurement (its baseline and same-body runs included: the server is idle in those). */
        reads: laps,
        server_cpu_s: sum((p) => p.server),
        postgres_cpu_s: postmaster === null ? null : sum((p) => p.postgres),
        peak,
      }
    },
  }
}
export type ResourceLog = ReturnType<ReturnType<typeof resourceLog>['stop']>
