// The release artifact: dist/trellis (npm run build) is one executable that runs with no node_modules anywhere:
// SQLite, the LevelDB addon of the content store, the SQL migrations and the Swagger UI files are all inside it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, tempDir, type TestServer } from '../dev/server.ts'
import { listeningUrl, waitForLine } from '../dev/lines.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { VERSION } from '../src/version.ts'
import { openContent } from '../src/content/open.ts'

const ROOT = join(import.meta.dir, '..')
const DIST = join(ROOT, 'dist', 'trellis')

/** Newest modification time of the inputs of the build: src/ and the build script. */
function newestInput(): number {
  let newest = statSync(join(ROOT, 'scripts', 'build.ts')).mtimeMs
  for (const name of readdirSync(join(ROOT, 'src'), { recursive: true }) as string[]) {
    const stat = statSync(join(ROOT, 'src', name))
    if (stat.isFile()) newest = Math.max(newest, stat.mtimeMs)
  }
  return newest
}

/** The commit the binary says it was built from, or null when there is no binary. */
function builtFrom(): string | null {
  if (!existsSync(DIST)) return null
  return /\(commit ([0-9a-f]+)/.exec(Bun.spawnSync([DIST, '--version']).stdout.toString())?.[1] ?? null
}

/** Rebuilt when a source is newer than the binary, or the binary names another commit (it prints its commit). */
async function buildIfStale(): Promise<void> {
  const head = Bun.spawnSync(['git', 'rev-parse', '--short=7', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
  if (existsSync(DIST) && statSync(DIST).mtimeMs >= newestInput() && builtFrom() === head) return
  const build = Bun.spawn([process.execPath, 'scripts/build.ts'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text(), build.exited])
  if (code !== 0) throw new Error(`bun scripts/build.ts failed (exit ${code}):\n${stdout}${stderr}`)
  console.log(stdout.trim())
}

let dir: string // a fresh folder outside the repository holding the copy under test
let binary: string
let server: TestServer
let startupMs: number

beforeAll(async () => {
  await buildIfStale()
  dir = tempDir('trellis-binary-')
  binary = join(dir, 'trellis')
  copyFileSync(DIST, binary)
  chmodSync(binary, 0o755)
  // No usable $TMPDIR (a path under a file, as under `docker run --read-only`): the addons go to the data directory.
  writeFileSync(join(dir, 'not-a-dir'), '')
  const started = performance.now()
  server = await startTestServer({ TMPDIR: join(dir, 'not-a-dir', 'tmp') }, { command: [binary], dataDir: join(dir, 'data') })
  startupMs = performance.now() - started
  console.log(`binary: ${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB; spawn → "listening" in ${startupMs.toFixed(0)} ms`)
}, 180_000)

afterAll(async () => {
  await server?.dispose()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** A minimal environment: nothing that could point the binary back at this repository, and no usable $TMPDIR. */
const isolatedEnv = (home: string, extra: Record<string, string> = {}) => ({
  PATH: '/usr/bin:/bin',
  HOME: home,
  TMPDIR: join(home, 'not-a-dir', 'tmp'),
  ...extra,
})

describe('dist/trellis', () => {
  test('names no path of this repository (nothing is looked up in node_modules at run time)', async () => {
    const bytes = await Bun.file(binary).bytes()
    expect(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(join(ROOT, 'node_modules'))).toBe(-1)
  })

  test(
    '--help exits 0 with the usage; --version prints the version, commit and build date (neither ' + 'loads an addon or needs $TMPDIR)',
    () => {
      writeFileSync(join(dir, 'not-a-dir'), '')
      const help = Bun.spawnSync([binary, '--help'], { cwd: dir, env: isolatedEnv(dir) })
      expect(help.exitCode).toBe(0)
      expect(help.stdout.toString()).toContain('Usage: trellis')
      expect(help.stdout.toString()).toContain('--data-dir')
      const commit = Bun.spawnSync(['git', 'rev-parse', '--short=7', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
      for (const args of [['--version'], ['version'], ['-v']]) {
        const version = Bun.spawnSync([binary, ...args], { cwd: dir, env: isolatedEnv(dir) })
        expect(version.exitCode).toBe(0)
        // Built today or yesterday (UTC): the binary may be from a build shortly before midnight.
        expect(version.stdout.toString()).toMatch(
          new RegExp(
            `^trellis ${VERSION.replaceAll('.', '\\.')} \\(commit ${commit}(-dirty)?, built ` +
              `(${[0, 1].map((days) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)).join('|')})\\)\n$`,
          ),
        )
      }
    },
  )

  test(
    'has no test hooks: TRELLIS_TEST_ALLOW_PRIVATE_FETCH with TRELLIS_TEST_HOOKS=1 leaves the SSRF ' + 'guard on, and it says so',
    async () => {
      const image = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: () =>
          new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]), {
            headers: { 'content-type': 'image/png' },
          }),
      })
      const hooked = await startTestServer(
        { TMPDIR: join(dir, 'tmp'), TRELLIS_TEST_HOOKS: '1', TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1', TRELLIS_TEST_CLOCK_OFFSET_S: '600' },
        { command: [binary], dataDir: join(dir, 'hooked-data') },
      )
      try {
        const reply = await call(hooked.url, 'POST', '/v1/feeds', {
          wallet: newWallet(),
          body: { name: 'ssrf', image_url: `http://127.0.0.1:${image.port}/cover.png` },
        })
        expect(reply.status).toBe(400)
        expect(reply.body).toMatchObject({ details: { field: 'image_url' } })
        const warning = hooked.logs.map((line) => JSON.parse(line)).find((line) => line.msg?.startsWith('test hooks'))
        expect(warning).toMatchObject({
          level: 'warn',
          msg: 'test hooks ignored: the executable has no test hooks',
          hooks: ['TRELLIS_TEST_ALLOW_PRIVATE_FETCH', 'TRELLIS_TEST_CLOCK_OFFSET_S'],
        })
      } finally {
        image.stop(true)
        await hooked.dispose()
      }
    },
  )

  test('holds its data directory with flock: a second start is refused even when trellis.pid is gone', () => {
    rmSync(join(server.dataDir, 'trellis.pid'))
    const second = Bun.spawnSync([binary], {
      cwd: dir,
      env: isolatedEnv(dir, { TRELLIS_DATA_DIR: server.dataDir, TRELLIS_PORT: '0', TRELLIS_HOST: '127.0.0.1' }),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect([second.exitCode, second.stderr.toString()]).toEqual([
      1,
      `trellis: the data directory ${server.dataDir} is in use by another trellis process\n`,
    ])
    writeFileSync(join(server.dataDir, 'trellis.pid'), `${server.pid}\n`) // for the commands below
  })

  test('starts in an empty folder, creates ./trellis-data, and maps nothing from node_modules', async () => {
    const home = tempDir('trellis-binary-empty-')
    try {
      copyFileSync(binary, join(home, 'trellis'))
      chmodSync(join(home, 'trellis'), 0o755)
      writeFileSync(join(home, 'not-a-dir'), '')
      // A .env here must not switch the network or the port: configuration is the flags and the environment.
      writeFileSync(join(home, '.env'), 'TRELLIS_NETWORK=base\nTRELLIS_PORT=1\n')
      const started = performance.now()
      const proc = Bun.spawn(['./trellis'], {
        cwd: home,
        env: isolatedEnv(home, { TRELLIS_PORT: '0', TRELLIS_HOST: '127.0.0.1' }),
        stdout: 'pipe',
        stderr: 'pipe',
      })
      try {
        let startLine = ''
        const url = await waitForLine(proc.stdout, listeningUrl, {
          timeoutMs: 20_000,
          what: 'trellis',
          onLine: (line) => (startLine ||= listeningUrl(line) ? line : ''),
        })
        // Signer keys are recovered by the embedded libsecp256k1, not the 7× slower JavaScript fallback.
        expect(JSON.parse(startLine)).toMatchObject({ signatures: 'libsecp256k1', network: 'base-sepolia' })
        const health = await fetch(`${url}/health`)
        expect(health.status).toBe(200)
        console.log(`binary in an empty folder: spawn → first 200 from /health in ${(performance.now() - started).toFixed(0)} ms`)
        expect(existsSync(join(home, 'trellis-data', 'trellis.db'))).toBe(true)
        expect(existsSync(join(home, 'trellis-data', 'blocks'))).toBe(true)
        if (process.platform === 'linux') {
          // The content store is open, so the LevelDB addon is loaded: it must come out of the binary.
          const mapped = readFileSync(`/proc/${proc.pid}/maps`, 'utf8')
            .split('\n')
            .map((line) => line.split(/\s+/)[5] ?? '')
          expect(mapped.filter((path) => path.includes('node_modules'))).toEqual([])
          // Both addons (LevelDB, libsecp256k1) come from the data directory's cache, written there once.
          const addons = new Set(mapped.filter((path) => path.endsWith('.node')))
          expect([...addons].map((path) => path.startsWith(join(home, 'trellis-data', 'cache', 'addons')))).toEqual([true, true])
        }
      } finally {
        proc.kill('SIGTERM')
      }
      expect(await proc.exited).toBe(0)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })

  test('with no writable place for its addons it stops with one clear line, not a stack', () => {
    const blocked = join(dir, 'not-a-dir') // every directory below a regular file is impossible, even for root
    writeFileSync(blocked, '')
    const run = Bun.spawnSync([binary], {
      cwd: dir,
      env: isolatedEnv(dir, { HOME: blocked, TRELLIS_DATA_DIR: join(blocked, 'data'), TRELLIS_PORT: '0' }),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(run.exitCode).toBe(1)
    const stderr = run.stderr.toString()
    expect(stderr).toMatch(/^trellis: cannot load the [\w-]+ addon: no writable directory to put it in; tried .+\n$/)
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })

  test('reaches "listening" quickly', () => {
    expect(startupMs).toBeLessThan(5_000)
  })

  test('GET /health', async () => {
    const reply = await call(server.url, 'GET', '/health')
    expect(reply.status).toBe(200)
    expect(reply.body.status).toBe('ok')
  })

  test('GET /v1/docs is the API explorer, using the embedded Swagger UI files only', async () => {
    const response = await fetch(`${server.url}/v1/docs`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    const html = await response.text()
    expect(html).toContain('/v1/docs/assets/swagger-ui-bundle.js')
    expect(html).toContain('/v1/docs/assets/swagger-ui.css')
    expect(html).not.toMatch(/https?:\/\//) // no CDN
  })

  test('the Swagger UI files are served from inside the binary', async () => {
    const assets = [
      ['swagger-ui-bundle.js', 'application/javascript'],
      ['swagger-ui.css', 'text/css'],
    ] as const
    for (const [name, type] of assets) {
      const response = await fetch(`${server.url}/v1/docs/assets/${name}`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toContain(type)
      const served = await response.text()
      expect(served).toBe(await Bun.file(Bun.resolveSync(`swagger-ui-dist/${name}`, ROOT)).text())
      if (name.endsWith('.js')) expect(served).toContain('SwaggerUIBundle')
    }
  })

  test('GET /v1/openapi.json describes the API', async () => {
    const reply = await call(server.url, 'GET', '/v1/openapi.json')
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toContain('application/json')
    const paths = Object.keys(reply.body.paths).map((path) => path.replace(/\/$/, ''))
    expect(paths).toContain('/v1/feeds')
  })

  test('SQLite works: POST /v1/auth/nonce', async () => {
    const wallet = newWallet()
    const reply = await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: wallet.address } })
    expect(reply.status).toBe(200)
    expect(typeof reply.body.nonce).toBe('string')
    expect(reply.body.message).toContain(reply.body.nonce)
  })

  test('LevelDB works: entry content round trip, also after a restart', async () => {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'binary round trip' })
    // Larger than one 256 KiB chunk, so the content is a DAG of several blocks.
    const text = `héllo from the binary ✓\n${Buffer.from(crypto.getRandomValues(new Uint8Array(200_000))).toString('hex')}\n`
    const bytes = new TextEncoder().encode(text)
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'text/plain', is_free: true })
    const read = async () => {
      const response = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toContain('text/plain')
      return new Uint8Array(await response.arrayBuffer())
    }
    expect(Buffer.compare(await read(), bytes)).toBe(0)
    await server.restart({ TMPDIR: join(dir, 'tmp') })
    expect(Buffer.compare(await read(), bytes)).toBe(0)
  })

  test('backup (by the running server), verify, restore and gc are subcommands of the same binary', async () => {
    const run = (args: string[]) => Bun.spawnSync([binary, ...args], { cwd: dir, env: isolatedEnv(dir), stdout: 'pipe', stderr: 'pipe' })
    const made = run(['backup', join(dir, 'backup'), '--data-dir', server.dataDir])
    expect(made.stderr.toString()).toContain('trellis backup: done')
    expect(JSON.parse(made.stdout.toString()).counts.entries).toBeGreaterThanOrEqual(1)
    expect(JSON.parse(run(['verify', '--data-dir', server.dataDir]).stdout.toString()).ok).toBe(true)
    const restored = run(['restore', join(dir, 'backup'), '--data-dir', join(dir, 'restored')])
    expect(restored.exitCode).toBe(0)
    expect(readdirSync(join(dir, 'restored')).sort()).toEqual(['blocks', 'cache', 'datastore', 'secret.key', 'trellis.db'])
    // Blocks no record there names: the binary's gc removes them and compacts LevelDB (the addon's compactRange).
    const content = await openContent(join(dir, 'restored'))
    await content.put(crypto.getRandomValues(new Uint8Array(600_000)))
    await content.close()
    const collected = run(['gc', '--data-dir', join(dir, 'restored')])
    expect(collected.exitCode).toBe(0)
    expect(JSON.parse(collected.stdout.toString())).toMatchObject({ removed: 4, spared: 0, dry_run: false }) // three leaves and their root
    expect(JSON.parse(run(['verify', '--data-dir', join(dir, 'restored')]).stdout.toString()).ok).toBe(true)
  })
})

describe('dist/trellis sells a paid entry', () => {
  test('x402 settlement works from the binary (anvil, local settlement)', async () => {
    const { startChain, v1Payment, encodePaymentHeader } = await import('../dev/chain.ts')
    const chain = await startChain()
    const paid = await startTestServer(
      { ...chain.env, TMPDIR: join(dir, 'tmp'), TRELLIS_STATS_REFRESH_S: '1' },
      { command: [binary], dataDir: join(dir, 'paid-data') },
    )
    try {
      const owner = newWallet()
      const feed = await createFeed(paid.url, owner)
      const entry = await createEntry(paid.url, owner, feed.id, {
        content_base64: b64('paid via the binary'),
        is_free: false,
        price: { amount: '1234' },
      })
      const buyer = await chain.newFundedBuyer(10_000n)
      const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: 1234n }))
      const reply = await fetch(`${paid.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, { headers: { 'x-payment': header } })
      expect(reply.status).toBe(200)
      expect(await reply.text()).toBe('paid via the binary')
      expect(await chain.balanceOf(owner.address)).toBe(1234n)
      expect((await call(paid.url, 'GET', `/v1/transactions?entry_id=${entry.id}`)).body.transactions).toHaveLength(1)
      // The leaderboards are built by the stats worker, a second entrypoint embedded in the binary.
      let board: any
      for (let i = 0; i < 50; i++) {
        board = (await call(paid.url, 'GET', '/v1/leaderboards/top-revenue')).body
        if (board.data.length > 0) break
        await Bun.sleep(100)
      }
      expect(board.data.map((f: any) => [f.feed_id, f.total_revenue])).toEqual([[feed.id, '1234']])
      const health = (await call(paid.url, 'GET', '/health')).body
      expect(health.jobs.stats.last_error).toBeNull()
      expect(health.jobs.rankings.last_error).toBeNull()
      const walletId = (await call(paid.url, 'GET', `/v1/wallets/address/${owner.address}`)).body.id
      expect((await call(paid.url, 'GET', `/v1/wallets/${walletId}/stats`)).body.revenue_stats.total_revenue).toBe('1234')
    } finally {
      await paid.dispose()
      await chain.stop()
    }
  })
})
