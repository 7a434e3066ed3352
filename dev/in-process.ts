// The app answering requests in this process (Elysia's app.handle): the same routes, services and stores as the
// server, on a temporary data directory, without a process, a socket or the edge in front (CORS, rate limit and
// the hot-read router are the spawned server's; test those there). Tens of times faster to start than a server.
// With TRELLIS_TEST_POSTGRES set, its records and content are in a PostgreSQL database of its own (test-database.ts).
import { rmSync } from 'node:fs'
import { configFrom } from '../src/config.ts'
import { buildApp, buildServices } from '../src/app.ts'
import { openDataContent, openDataRecords } from '../src/ops/data-stores.ts'
import { allowingTestHooks, tempDir } from './server.ts'
import { testDatabase } from './test-database.ts'
import type { InProcess } from './api.ts'

// Elysia answers 404 to a request whose host it cannot route (such as http://x), so a real-looking origin is used.
const ORIGIN = 'http://127.0.0.1:3000'

export interface InProcessApp extends InProcess {
  dataDir: string
  /** The variables that locate its records beside the data directory (its database URL), for a command run on them. */
  recordsEnv: Record<string, string>
  /** Every route the app answers: its method, path pattern (`:name` parameters) and whether the docs hide it. */
  routes: Array<{ method: string; path: string; hidden: boolean }>
  /** A request to `path` (fetch's init), answered in process. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** Closes the stores, keeping the data directory (then edit it, and restart). */
  stop(): Promise<void>
  /** Opens the same data directory again, as a restarted server would. */
  restart(): Promise<void>
  dispose(): Promise<void>
}

async function open(dataDir: string, env: Record<string, string>) {
  const config = configFrom({ TRELLIS_DATA_DIR: dataDir, TRELLIS_LOG: 'warn', TRELLIS_RATE_LIMIT: 'off', ...allowingTestHooks(env) })
  const records = await openDataRecords(config)
  const content = await openDataContent(config, records)
  const errors: unknown[] = []
  const services = await buildServices({
    config,
    records,
    content,
    secret: await records.secret(),
    publicUrl: () => ORIGIN,
    health: () => ({}),
    logError: (error) => errors.push(error),
    logWarn: () => {},
  })
  const app = buildApp(services, (error) => errors.push(error))
  app.compile()
  return {
    app,
    errors,
    async close() {
      await content.close()
      await records.close()
    },
  }
}

export async function startInProcess(env: Record<string, string> = {}): Promise<InProcessApp> {
  const dataDir = tempDir('trellis-inproc-')
  const database = env.TRELLIS_DATABASE_URL ? null : await testDatabase()
  const recordsEnv: Record<string, string> = database ? database.env : {}
  env = { ...recordsEnv, ...env }
  let opened: Awaited<ReturnType<typeof open>> | null = await open(dataDir, env)
  const handle = async (request: Request) => {
    if (!opened) throw new Error('the in-process app is stopped')
    const response = await opened.app.handle(request)
    // An unhandled error is a 500 the test should see as a failure, with its cause.
    if (opened.errors.length)
      throw new Error(`unhandled error in the app: ${String((opened.errors[0] as Error)?.stack ?? opened.errors[0])}`)
    return response
  }
  return {
    url: ORIGIN,
    dataDir,
    recordsEnv,
    routes: opened.app.routes.map((route) => ({
      method: route.method,
      path: route.path,
      hidden: Boolean((route.hooks as { detail?: { hide?: boolean } })?.detail?.hide),
    })),
    handle,
    fetch: (path, init) => handle(new Request(`${ORIGIN}${path}`, init)),
    async stop() {
      await opened?.close()
      opened = null
    },
    async restart() {
      await opened?.close()
      opened = await open(dataDir, env)
    },
    async dispose() {
      await opened?.close()
      opened = null
      rmSync(dataDir, { recursive: true, force: true })
      await database?.drop()
    },
  }
}
