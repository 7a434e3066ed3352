// Starts the real server (bun src/main.ts) as a child process on 127.0.0.1 with a temporary data directory, and
// with TRELLIS_TEST_POSTGRES set, a PostgreSQL database of its own (test-database.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { listeningUrl, waitForLine } from './lines.ts'
import { TEST_HOOKS } from '../src/test-hooks.ts'
import { testDatabase, type TestDatabase } from './test-database.ts'

const ROOT = join(import.meta.dir, '..')

export interface TestServer {
  url: string
  /** The server process's id (changes on restart). */
  readonly pid: number
  dataDir: string
  /** The variables that locate its records beside the data directory (its database URL), for a command run on them. */
  recordsEnv: Record<string, string>
  logs: string[]
  /** Graceful stop (SIGTERM) and wait for exit. */
  stop(): Promise<number>
  /** SIGKILL, as a crash. */
  kill(): Promise<void>
  /**
   * Sets the running server's clock `offsetS` seconds ahead of the wall clock, and resolves once it has (a server
   * started with TRELLIS_TEST_CLOCK_FILE: testClockFile()). A deadline is passed so, not raced.
   */
  moveClock(offsetS: number): Promise<void>
  /** Stop, then start again on the same data directory. */
  restart(env?: Record<string, string>): Promise<void>
  /** Stop and delete the data directory. */
  dispose(): Promise<void>
}

/** The environment of a test server: the test hooks it is given are allowed (TRELLIS_TEST_HOOKS=1), unless it says. */
export function allowingTestHooks(env: Record<string, string>): Record<string, string> {
  return Object.keys(env).some((name) => (TEST_HOOKS as readonly string[]).includes(name)) ? { TRELLIS_TEST_HOOKS: '1', ...env } : env
}

/** Every temporary directory made here, removed when the test process exits (a server's is also at its dispose). */
const made: string[] = []
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

export function tempDir(prefix = 'trellis-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** A file for TRELLIS_TEST_CLOCK_FILE, for a server whose clock the test moves (TestServer.moveClock). */
export const testClockFile = (): string => join(tempDir('trellis-clock-'), 'offset')

async function spawnServer(
  dataDir: string,
  env: Record<string, string>,
  logs: string[],
  command: string[],
): Promise<{ proc: Subprocess; url: string }> {
  const proc = Bun.spawn(command, {
    cwd: ROOT,
    env: {
      ...process.env,
      TRELLIS_DATA_DIR: dataDir,
      TRELLIS_PORT: '0',
      TRELLIS_HOST: '127.0.0.1',
      TRELLIS_LOG: 'info',
      TRELLIS_RATE_LIMIT: 'off',
      ...allowingTestHooks(env),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const onLine = (line: string) => {
    logs.push(line)
    if (logs.length > 5000) logs.splice(0, logs.length - 5000)
  }
  let url: string
  try {
    url = await waitForLine(proc.stdout, listeningUrl, { timeoutMs: 20_000, onLine, what: 'the server' })
  } catch (error) {
    proc.kill('SIGKILL')
    const stderr = await new Response(proc.stderr).text()
    throw new Error(`${(error as Error).message} (exit ${await proc.exited}):\n${stderr}\n${logs.join('\n')}`)
  }
  return { proc, url }
}

/** Data directories of running test servers → the database each has beside it: `trellis()` finds a server's records so. */
const databases = new Map<string, Record<string, string>>()
/** Databases given to data directories no server has started on yet (restoreTarget): the first server there owns it. */
const unclaimed = new Map<string, TestDatabase>()

/**
 * A data directory a command is about to make (`trellis restore` into it), for a server started on it after: with the
 * suite on PostgreSQL, it gets its own database now, which `trellis()` and that server use (and which the server drops
 * at its dispose); on the embedded engine, nothing. Its path, for chaining.
 */
export async function restoreTarget(dataDir: string): Promise<string> {
  if (databases.has(dataDir)) return dataDir
  const database = await testDatabase()
  if (database) {
    databases.set(dataDir, database.env)
    unclaimed.set(dataDir, database)
  }
  return dataDir
}

/**
 * How a test starts the server: `bun src/main.ts`, or the executable TRELLIS_TEST_BINARY names (npm test builds one
 * from this tree first: it answers in about 0.3 s where the source takes 1.6–2.3 s to load, over 200 starts a pass).
 */
export const SERVER_COMMAND: readonly string[] = process.env.TRELLIS_TEST_BINARY
  ? [resolve(ROOT, process.env.TRELLIS_TEST_BINARY)]
  : [process.execPath, 'src/main.ts']

/** `embedded`: records in the data directory even when the suite runs on PostgreSQL (a test of the embedded engine itself). */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { command?: string[]; dataDir?: string; embedded?: boolean } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir()
  const command = options.command ?? [...SERVER_COMMAND]
  const logs: string[] = []
  const claimed = options.embedded ? undefined : unclaimed.get(dataDir)
  unclaimed.delete(dataDir)
  const database = claimed ?? (options.embedded || env.TRELLIS_DATABASE_URL || databases.has(dataDir) ? null : await testDatabase())
  const given = options.embedded ? undefined : env.TRELLIS_DATABASE_URL
  const recordsEnv: Record<string, string> = database
    ? database.env
    : given
      ? {
          TRELLIS_DATABASE_URL: given,
          ...(env.TRELLIS_DATABASE_DIRECT_URL ? { TRELLIS_DATABASE_DIRECT_URL: env.TRELLIS_DATABASE_DIRECT_URL } : {}),
        }
      : (databases.get(dataDir) ?? {})
  if (database) databases.set(dataDir, recordsEnv)
  env = { ...recordsEnv, ...env }
  let current: Awaited<ReturnType<typeof spawnServer>>
  try {
    current = await spawnServer(dataDir, env, logs, command)
  } catch (error) {
    if (database) {
      databases.delete(dataDir)
      await database.drop()
    }
    throw error
  }
  let currentEnv = env
  const server: TestServer = {
    url: current.url,
    get pid() {
      return current.proc.pid
    },
    dataDir,
    recordsEnv,
    logs,
    async stop() {
      current.proc.kill('SIGTERM')
      return await current.proc.exited
    },
    async kill() {
      current.proc.kill('SIGKILL')
      await current.proc.exited
    },
    async moveClock(offsetS) {
      const file = currentEnv.TRELLIS_TEST_CLOCK_FILE
      if (!file) throw new Error('moveClock: the server was started without TRELLIS_TEST_CLOCK_FILE')
      writeFileSync(file, String(offsetS))
      const from = logs.length
      current.proc.kill('SIGUSR2')
      const moved = (line: string) => line.includes('"test clock moved"') && line.includes(`"offset_s":${offsetS}`)
      const started = performance.now()
      while (!logs.slice(Math.min(from, logs.length - 1)).some(moved)) {
        if (performance.now() - started > 10_000) throw new Error(`moveClock: the server did not say it moved its clock to ${offsetS} s`)
        await Bun.sleep(5)
      }
    },
    async restart(env) {
      if (current.proc.exitCode === null && !current.proc.killed) await server.stop()
      currentEnv = env ? { ...recordsEnv, ...env } : currentEnv
      current = await spawnServer(dataDir, currentEnv, logs, command)
      server.url = current.url
    },
    async dispose() {
      if (current.proc.exitCode === null) {
        current.proc.kill('SIGTERM')
        await current.proc.exited
      }
      rmSync(dataDir, { recursive: true, force: true })
      if (database) {
        databases.delete(dataDir)
        await database.drop()
      }
    },
  }
  return server
}

/** `trellis <args> --data-dir <dataDir>`, as an operator runs a command: its exit code, output and JSON result. */
export async function trellis(args: string[], dataDir: string, env: Record<string, string> = {}) {
  const run = Bun.spawn([...SERVER_COMMAND, ...args, '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, ...databases.get(dataDir), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  return {
    code,
    stdout,
    stderr,
    json: (() => {
      try {
        return JSON.parse(stdout)
      } catch {
        return null
      }
    })(),
  }
}
