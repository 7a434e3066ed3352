// The app answering requests in this process (Elysia's app.handle): the same routes, services and stores as the
// server, on a temporary data directory, without a process, a socket or the edge in front (CORS, rate limit and
// the hot-read router are the spawned server's; test those there). Tens of times faster to start than a server.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { configFrom } from '../src/config.ts'
import { openDb } from '../src/store/db.ts'
import { openContent } from '../src/content/helia.ts'
import { loadSecret } from '../src/store/secret.ts'
import { buildApp, buildServices } from '../src/app.ts'
import { tempDir } from './server.ts'
import type { InProcess } from './api.ts'

// Elysia answers 404 to a request whose host it cannot route (such as http://x), so a real-looking origin is used.
const ORIGIN = 'http://127.0.0.1:3000'

export interface InProcessApp extends InProcess {
  dataDir: string
  /** Every route the app answers: its method, path pattern (`:name` parameters) and whether the docs hide it. */
  routes: Array<{ method: string; path: string; hidden: boolean }>
  dispose(): Promise<void>
}

export async function startInProcess(env: Record<string, string> = {}): Promise<InProcessApp> {
  const dataDir = tempDir('trellis-inproc-')
  const config = configFrom({ TRELLIS_DATA_DIR: dataDir, TRELLIS_LOG: 'warn', TRELLIS_RATE_LIMIT: 'off', ...env })
  const db = openDb(join(dataDir, 'trellis.db'))
  const content = await openContent(dataDir)
  const errors: unknown[] = []
  const services = buildServices({
    config, db, content, secret: loadSecret(dataDir),
    publicUrl: () => ORIGIN,
    health: () => ({}),
    logError: (error) => errors.push(error),
    logWarn: () => {},
  })
  const app = buildApp(services, (error) => errors.push(error))
  app.compile()
  return {
    url: ORIGIN,
    dataDir,
    routes: app.routes.map((route) => ({ method: route.method, path: route.path, hidden: Boolean((route.hooks as { detail?: { hide?: boolean } })?.detail?.hide) })),
    async handle(request) {
      const response = await app.handle(request)
      // An unhandled error is a 500 the test should see as a failure, with its cause.
      if (errors.length) throw new Error(`unhandled error in the app: ${String((errors[0] as Error)?.stack ?? errors[0])}`)
      return response
    },
    async dispose() {
      await content.close()
      db.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
