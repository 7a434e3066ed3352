// The Dockerfile's steps, run without Docker by scripts/dockerfile-steps.ts: the build stage as written, then the
// runtime stage's binary started as the container would be (unprivileged, read-only root, its HEALTHCHECK).
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { VERSION } from '../src/version.ts'
import { TEST_POSTGRES } from '../dev/test-database.ts'

// The image's server runs on its embedded default and nothing here reads TRELLIS_TEST_POSTGRES: the steps (a full
// `npm ci` and a build, about a minute) run once, in the embedded pass, not again in the PostgreSQL one.
if (TEST_POSTGRES) console.log('dockerfile.test.ts: skipped: the image runs the embedded engine; the embedded pass runs it')

test.skipIf(Boolean(TEST_POSTGRES))(
  'the Dockerfile builds, and its image starts unprivileged on a read-only root, healthy, and stops on SIGTERM',
  async () => {
    // The build context has no .git: the commit the image reports is the one the builder names as a build argument.
    const commit = 'd0c4e12'
    const run = Bun.spawn([process.execPath, 'scripts/dockerfile-steps.ts', '--build-arg', `TRELLIS_BUILD_COMMIT=${commit}`], {
      cwd: join(import.meta.dir, '..'),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
    if (code !== 0) console.log(out.slice(-3000), err.slice(-3000))
    expect(code).toBe(0)
    expect(out).toContain(`the image runs trellis ${VERSION} (commit ${commit}, built `)
    expect(out).toContain('HEALTHCHECK passed')
    expect(out).toContain('verify, gc and backup ran in the container against the live server')
    expect(out).toContain('SIGTERM: exited 0')
    expect(out).toContain('HEALTHCHECK fails once the server is stopped')
    expect(out).toContain('every step passed')
  },
  300_000,
)
