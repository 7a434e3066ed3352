// The servers a measure script starts are the executable built from the tree (dist/trellis-test, made first with
// the test hooks the dev helpers use), as the main bench runs its own: from source a server is slower to start and
// to answer. Returns dev/server.ts's startTestServer, loaded once the executable is named.
import { join } from 'node:path'

export async function builtTestServers(): Promise<typeof import('../../dev/server.ts')['startTestServer']> {
  const root = join(import.meta.dir, '..', '..')
  const args = ['bun', 'scripts/build.ts', '--outfile', 'dist/trellis-test', '--no-minify', '--test-hooks']
  const built = Bun.spawnSync(args, { cwd: root })
  if (built.exitCode !== 0) throw new Error(`the build failed: ${built.stderr}`)
  process.env.TRELLIS_TEST_BINARY = join(root, 'dist/trellis-test')
  return (await import('../../dev/server.ts')).startTestServer
}
