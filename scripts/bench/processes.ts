// Child processes of the benchmark: the server under test, the bare baseline, and their memory figures.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

export interface Child {
  pid: number
  url: string
  /** Last lines the child printed (stdout and stderr), for error messages. */
  tail(): string
  stop(): Promise<void>
}

/** A port nobody listens on right now (the server is told the port up front so we can poll it from the spawn). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

function keepTail(proc: Subprocess<'ignore', 'pipe', 'pipe'>): () => string {
  const lines: string[] = []
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      lines.push(...decoder.decode(r.value).split('\n').filter(Boolean))
      if (lines.length > 40) lines.splice(0, lines.length - 40)
    }
  }
  void drain(proc.stdout)
  void drain(proc.stderr)
  return () => lines.join('\n')
}

async function stopProcess(proc: Subprocess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000) // a clean stop finishes in-flight requests first
  await proc.exited
  clearTimeout(timer)
}

/**
 * Starts dist/trellis on dataDir and returns once GET <probe> answers 200; startMs is spawn → that first 200,
 * polled every 2 ms (the start-up figure the targets name).
 */
export async function startTrellis(
  binary: string,
  dataDir: string,
  env: Record<string, string>,
  probe: string,
  args: string[] = [],
): Promise<Child & { startMs: number }> {
  const port = freePort()
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  const proc = Bun.spawn([binary, ...args], {
    env: {
      ...process.env,
      TRELLIS_DATA_DIR: dataDir,
      TRELLIS_HOST: '127.0.0.1',
      TRELLIS_PORT: String(port),
      TRELLIS_RATE_LIMIT: 'off',
      TRELLIS_LOG: 'warn',
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const tail = keepTail(proc)
  const child = { pid: proc.pid, url, tail, stop: () => stopProcess(proc) }
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`trellis exited ${proc.exitCode} during start-up:\n${tail()}`)
    if (performance.now() - started > 300_000) {
      await child.stop()
      throw new Error(`trellis did not answer 200 on ${probe} within 300 s:\n${tail()}`)
    }
    const status = await fetch(`${url}${probe}`).then(
      (r) => r.arrayBuffer().then(() => r.status),
      () => 0,
    )
    if (status === 200) return { ...child, startMs: performance.now() - started }
    await Bun.sleep(2)
  }
}

/** dev/balancer.ts in its own process at `port`, round-robin over `targets`; returns once it answers. */
export async function startBalancerProcess(port: number, targets: string[]): Promise<Child> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, '..', '..', 'dev', 'balancer.ts'), String(port), ...targets], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const tail = keepTail(proc)
  const url = `http://127.0.0.1:${port}`
  for (const started = performance.now(); ; await Bun.sleep(20)) {
    if (proc.exitCode !== null) throw new Error(`the balancer exited ${proc.exitCode}:\n${tail()}`)
    if (
      await fetch(`${url}/health`).then(
        (r) => r.arrayBuffer().then(() => true),
        () => false,
      )
    )
      break
    if (performance.now() - started > 10_000) throw new Error(`the balancer did not answer within 10 s:\n${tail()}`)
  }
  return { pid: proc.pid, url, tail, stop: () => stopProcess(proc) }
}

/** The bare baseline: Bun.serve answering a small JSON body, in its own process (wrk must not share our loop). */
export async function startBaseline(): Promise<Child> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'baseline.ts')], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const reader = proc.stdout.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  reader.releaseLock()
  const url = /^(http:\S+)/m.exec(first)?.[1]
  if (!url) {
    proc.kill('SIGKILL')
    throw new Error(`baseline did not print its URL: ${first}`)
  }
  return { pid: proc.pid, url, tail: () => '', stop: () => stopProcess(proc) }
}

/** VmRSS and VmHWM of a process, in bytes (0 when it is gone). */
export function memory(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
  } catch {
    return { rss: 0, hwm: 0 }
  }
}

/** Polls VmRSS every 20 ms until stopped; returns the peak seen (and the start value). */
export function rssSampler(pid: number) {
  const before = memory(pid).rss
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, memory(pid).rss)
  }, 20)
  return {
    before,
    stop() {
      clearInterval(timer)
      peak = Math.max(peak, memory(pid).rss)
      return { before, peak, growth: peak - before }
    },
  }
}

/** The server's background jobs as /health reports them: name → last_run (null until a first run finished). */
export async function jobRuns(url: string): Promise<Record<string, number | null> | null> {
  const health = (await fetch(`${url}/health`).then(
    (r) => r.json(),
    () => null,
  )) as { jobs?: Record<string, { last_run?: number | null }> } | null
  if (!health?.jobs) return null
  return Object.fromEntries(Object.entries(health.jobs).map(([name, job]) => [name, job.last_run ?? null]))
}

/**
 * Waits until every job has run once: start-up builds (statistics, ranks, ledger check) must not compete with the
 * measurements. Returns the milliseconds waited (the caller records it).
 */
export async function jobsSettled(url: string, timeoutMs = 300_000): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    const runs = await jobRuns(url)
    if (!runs || Object.values(runs).every((v) => v !== null)) return performance.now() - started
    await Bun.sleep(100)
  }
  throw new Error(`the server's start-up jobs did not all finish within ${timeoutMs / 1000} s`)
}
