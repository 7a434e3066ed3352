import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { listeningUrl, waitForLine } from '../dev/lines.ts'
import { operationRecord } from '../src/ops/record.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.dispose())

describe('edges', () => {
  test('unknown routes and wrong methods → 404 NOT_FOUND in shape A', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/nope'],
      ['PUT', '/v1/feeds'],
      ['POST', '/v1/categories'],
    ]) {
      const reply = await call(server.url, method, path)
      expect(reply.status).toBe(404)
      expect(reply.body).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
    }
  })

  test('bodies that are not JSON objects', async () => {
    for (const rawBody of ['', 'null', '[]', '"text"', '{"wallet_address":']) {
      const reply = await call(server.url, 'POST', '/v1/auth/nonce', { rawBody })
      expect(reply.status).toBe(400)
      expect(['INVALID_JSON', 'INVALID_PARAMETER']).toContain(reply.body.code)
    }
    const wallet = newWallet()
    for (const rawBody of ['null', '[]', '"text"', '42']) {
      const reply = await call(server.url, 'POST', '/v1/feeds', { wallet, rawBody })
      expect(reply.status).toBe(400)
    }
  })

  test('image_url may not point at loopback or private addresses', async () => {
    const local = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(new Uint8Array([1, 2, 3])) })
    try {
      const wallet = newWallet()
      for (const image_url of [
        `http://127.0.0.1:${local.port}/x.png`,
        `http://localhost:${local.port}/x.png`,
        'http://10.0.0.1/x.png',
        'http://[::1]/x.png',
        'http://169.254.169.254/latest',
      ]) {
        const reply = await call(server.url, 'POST', '/v1/feeds', { wallet, body: { name: 'ssrf', image_url } })
        expect(reply.status).toBe(400)
        expect(reply.body).toMatchObject({ error: 'invalid_request', details: { field: 'image_url' } })
      }
    } finally {
      local.stop(true)
    }
  })

  test('CORS is open to every origin with "*" (no credentials are used) and exposes the payment headers', async () => {
    const preflight = await fetch(`${server.url}/v1/feeds`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-signature,content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-signature,content-type')
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST')
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull()
    for (const headers of [{ origin: 'https://app.example' }, {}] as Record<string, string>[]) {
      const get = await fetch(`${server.url}/v1/categories`, { headers })
      expect(get.headers.get('access-control-allow-origin')).toBe('*')
      expect(get.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-payment-response')
      expect(get.headers.get('access-control-allow-credentials')).toBeNull()
      expect(get.headers.get('vary')).toBeNull() // the same answer for every origin: nothing to vary on
    }
  })

  test('/health, /v1/openapi.json and /v1/docs', async () => {
    const health = await call(server.url, 'GET', '/health')
    expect(health.status).toBe(200)
    expect(health.body.status).toBe('ok')
    expect(health.body.jobs).toBeDefined()
    const spec = await call(server.url, 'GET', '/v1/openapi.json')
    expect(spec.status).toBe(200)
    expect(spec.body.openapi).toMatch(/^3\./)
    const paths = Object.keys(spec.body.paths)
    for (const p of [
      '/v1/auth/nonce',
      '/v1/feeds',
      '/v1/feeds/{feed_id}',
      '/v1/feeds/{feed_id}/entries',
      '/v1/feeds/{feed_id}/entries/{entry_id}',
      '/v1/wallets/{wallet_id}',
      '/v1/categories',
    ]) {
      expect(paths).toContain(p)
    }
    const create = spec.body.paths['/v1/feeds'].post
    expect(create.security).toEqual([{ walletAddress: [], walletSignature: [], walletMessage: [], walletTimestamp: [] }])
    expect(Object.keys(spec.body.components.securitySchemes)).toEqual(
      expect.arrayContaining(['walletAddress', 'walletSignature', 'walletMessage', 'walletTimestamp']),
    )
    // The trailing-slash spelling reaches the same routes.
    expect((await fetch(`${server.url}/v1/feeds/`)).status).toBe(200)
    expect((await fetch(`${server.url}/v1/transactions/`)).status).toBe(200)
    const docs = await fetch(`${server.url}/v1/docs`)
    expect(docs.status).toBe(200)
    const html = await docs.text()
    expect(html).toContain('swagger-ui')
    expect(html).not.toMatch(/https?:\/\//)
  })
})

describe('observability', () => {
  test('/metrics: requests by route template and status, process_*, the build, payments by outcome, jobs', async () => {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner)
    const paid = await createEntry(server.url, owner, feed.id, { is_free: false, price: { amount: '100' } })
    await fetch(`${server.url}/v1/feeds/${feed.id}`) // a hot read
    await fetch(`${server.url}/v1/categories?page_size=2`) // an Elysia route
    await fetch(`${server.url}/no/such/path`)
    await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}`, { headers: { 'x-payment': 'not a payment' } })
    const metrics = await fetch(`${server.url}/metrics`)
    expect(metrics.headers.get('content-type')).toStartWith('text/plain')
    const text = await metrics.text()
    const count = (labels: string) =>
      Number(new RegExp(`^trellis_http_requests_total\\{${labels.replace(/[{}]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
    expect(count('method="GET",route="/v1/feeds/:feed_id",status="200"')).toBeGreaterThanOrEqual(1)
    expect(count('method="GET",route="/v1/categories",status="200"')).toBeGreaterThanOrEqual(1)
    expect(count('method="POST",route="/v1/feeds",status="201"')).toBeGreaterThanOrEqual(1)
    expect(count('method="GET",route="other",status="404"')).toBeGreaterThanOrEqual(1)
    expect(count('method="GET",route="/v1/feeds/:feed_id/entries/:entry_id",status="402"')).toBeGreaterThanOrEqual(1)
    expect(text).toMatch(/^trellis_http_request_duration_seconds_count\{method="GET",route="\/v1\/categories"\} \d+$/m)
    for (const series of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'process_open_fds',
      'process_max_fds',
      'process_virtual_memory_bytes',
    ]) {
      expect(text).toMatch(new RegExp(`^${series} \\d+(\\.\\d+)?(e[+-]?\\d+)?$`, 'm'))
    }
    expect(text).toMatch(/^trellis_build_info\{version="\d+\.\d+\.\d+",bun="[\d.]+",network="base-sepolia"\} 1$/m)
    expect(text).toMatch(/^trellis_payments_total\{outcome="refused"\} [1-9]\d*$/m)
    expect(text).toMatch(/^trellis_payments_total\{outcome="paid"\} 0$/m)
    expect(text).toMatch(/^trellis_job_runs_total\{job="stats",result="ok"\} [1-9]\d*$/m)
    expect(text).toMatch(/^trellis_job_last_duration_seconds\{job="stats"\} [\d.e-]+$/m)
    expect(text).toMatch(/^trellis_active_feeds \d+$/m)
  })

  test('X-Request-Id: kept when the caller sends a plain one, made otherwise, on every answer and in the request log', async () => {
    const mine = 'trace-1234.abc:def'
    const echoed = await fetch(`${server.url}/v1/categories`, { headers: { 'x-request-id': mine } })
    expect(echoed.headers.get('x-request-id')).toBe(mine)
    expect(echoed.headers.get('access-control-expose-headers')).toContain('X-Request-Id')
    const made = await fetch(`${server.url}/v1/leaderboards/top-feeds`) // hot path
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    for (const bad of ['has spaces in it', 'x'.repeat(129), 'quote"d']) {
      const replaced = await fetch(`${server.url}/v1/categories`, { headers: { 'x-request-id': bad } })
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    }
    const failed = await fetch(`${server.url}/v1/feeds/not-a-uuid`, { headers: { 'x-request-id': 'req-for-an-error' } })
    expect(failed.status).toBe(400)
    expect(failed.headers.get('x-request-id')).toBe('req-for-an-error')
    await Bun.sleep(50)
    const logged = server.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request')
    expect(logged.find((line) => line.request_id === mine)).toMatchObject({ method: 'GET', path: '/v1/categories', status: 200 })
    expect(logged.find((line) => line.request_id === made.headers.get('x-request-id'))).toMatchObject({
      path: '/v1/leaderboards/top-feeds',
    })
  })
})

describe('persistence', () => {
  test('data dir layout, and records and content survive a restart with the same CIDs', async () => {
    if (server.recordsEnv.TRELLIS_DATABASE_URL) {
      // Records, content and the key in PostgreSQL: the data directory holds none of them (its caches only).
      for (const name of ['trellis.db', 'blocks', 'datastore', 'secret.key']) expect(existsSync(join(server.dataDir, name))).toBe(false)
      expect((await withRecords(server, (db) => db.get<{ value: string }>(`SELECT value FROM meta WHERE key = 'secret'`)))?.value).toMatch(
        /^[0-9a-f]{64}$/,
      )
    } else {
      expect(existsSync(join(server.dataDir, 'trellis.db'))).toBe(true)
      expect(existsSync(join(server.dataDir, 'blocks'))).toBe(true)
      expect(existsSync(join(server.dataDir, 'datastore'))).toBe(true)
      expect(statSync(join(server.dataDir, 'secret.key')).mode & 0o777).toBe(0o600)
    }

    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'durable', tags: ['keep'] })
    const bytes = crypto.getRandomValues(new Uint8Array(700_000))
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/webm', title: 'kept' })
    const firstPage = await call(server.url, 'GET', `/v1/feeds?owner_id=${feed.owner_id}&page_size=1`)
    const before = (await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body
    expect(before.total_entries).toBe(1)

    expect(await server.stop()).toBe(0) // SIGTERM → clean exit
    await server.restart()

    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}`)).body).toEqual(before)
    const got = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)
    expect(got.body.cid).toBe(entry.cid)
    const content = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`)
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes)
    // Adding the same bytes again after the restart gives the same CID.
    expect((await createEntry(server.url, owner, feed.id, { content_base64: b64(bytes), mime_type: 'video/webm' })).cid).toBe(entry.cid)
    // Signed things (page tokens, content URLs) stay valid: the key persisted.
    expect(
      (
        await call(
          server.url,
          'GET',
          `/v1/feeds?owner_id=${feed.owner_id}&page_size=1&page_token=${firstPage.body.pagination.next_page_token ?? ''}`,
        )
      ).status,
    ).toBe(200)
    expect((await fetch(got.body.content_url)).status).toBe(200)
  })

  test('a second server on the same data dir is refused with a clear message', async () => {
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: join(import.meta.dir, '..'),
      env: { ...process.env, TRELLIS_DATA_DIR: server.dataDir, TRELLIS_PORT: '0' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await proc.exited).toBe(1)
    expect(await new Response(proc.stderr).text()).toContain('is in use by another trellis process')
  })
})

describe('command line', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    Bun.spawnSync([process.execPath, 'src/main.ts', ...args], {
      cwd: join(import.meta.dir, '..'),
      env: { ...process.env, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    })

  test('--help lists every flag; bad flags and bad env values exit 2 with a message', () => {
    const help = run(['--help'])
    expect(help.exitCode).toBe(0)
    for (const flag of ['--host', '--port', '--data-dir', '--public-url', '--network', 'TRELLIS_RPC_URL', 'TRELLIS_ADMIN_KEY'])
      expect(help.stdout.toString()).toContain(flag)
    const bad = run(['--bogus'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr.toString()).toBe('trellis: unknown option --bogus for trellis serve (see trellis --help)\n')
    expect(run(['--port', 'eighty']).exitCode).toBe(2)
    expect(run([], { TRELLIS_NETWORK: 'mainnet' }).exitCode).toBe(2)
    expect(run(['--version']).stdout.toString()).toMatch(/^trellis \d+\.\d+\.\d+/)
  })

  test('flags win over env; --public-url is the base of content_url', async () => {
    // Mainnet needs a facilitator that settles it (the default one settles testnets only): never called here.
    const other = await startTestServer(
      { TRELLIS_NETWORK: 'base-sepolia', TRELLIS_FACILITATOR_URL: 'https://facilitator.example.org' },
      { command: [process.execPath, 'src/main.ts', '--network', 'base', '--public-url', 'https://feeds.example.org'] },
    )
    try {
      const owner = newWallet()
      const feed = await createFeed(other.url, owner)
      const paid = await createEntry(other.url, owner, feed.id, { is_free: false, price: { amount: '5', network: 'base' } })
      const challenge = await call(other.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}`)
      expect(challenge.body.accepts[0]).toMatchObject({
        network: 'base',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        extra: { name: 'USD Coin', version: '2' },
      })
      expect(challenge.body.accepts[0].resource).toBe(`https://feeds.example.org/v1/feeds/${feed.id}/entries/${paid.id}`)
      const free = await createEntry(other.url, owner, feed.id)
      expect((await call(other.url, 'GET', `/v1/feeds/${feed.id}/entries/${free.id}`)).body.content_url).toStartWith(
        'https://feeds.example.org/v1/access/',
      )
      const nonce = await call(other.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: owner.address } })
      expect(nonce.body.message).toContain('(feeds.example.org)')
    } finally {
      await other.dispose()
    }
  })
})

describe('graceful shutdown', () => {
  test('SIGTERM lets an in-flight upload finish, then exits 0; the entry is there after a restart', async () => {
    const own = await startTestServer()
    try {
      const owner = newWallet()
      const feed = await createFeed(own.url, owner)
      const headers = await authHeaders(own.url, owner)
      const payload = new TextEncoder().encode(
        JSON.stringify({ content_base64: b64(new Uint8Array(600_000)), mime_type: 'application/pdf' }),
      )
      let sent = 0
      // A slow client: the body trickles in over ~600 ms, so the request is in flight when SIGTERM arrives.
      const body = new ReadableStream({
        async pull(controller) {
          if (sent >= payload.byteLength) return controller.close()
          await Bun.sleep(50)
          controller.enqueue(payload.subarray(sent, sent + 70_000))
          sent += 70_000
        },
      })
      const upload = fetch(`${own.url}/v1/feeds/${feed.id}/entries`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit)
      await Bun.sleep(150)
      const exited = own.stop()
      const reply = await upload
      expect(reply.status).toBe(201)
      const entry = await reply.json()
      expect(await exited).toBe(0)
      await own.restart()
      expect((await call(own.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)).body.cid).toBe(entry.cid)
    } finally {
      await own.dispose()
    }
  })
})

describe('running it', () => {
  /** Every path under `dir` whose mode is not owner-only (0700 directories, 0600 files). */
  function looseModes(dir: string): string[] {
    const loose: string[] = []
    const visit = (path: string) => {
      const stat = lstatSync(path)
      if (stat.isSymbolicLink()) return
      if ((stat.mode & 0o777) !== (stat.isDirectory() ? 0o700 : 0o600)) loose.push(`${path} ${(stat.mode & 0o777).toString(8)}`)
      if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
    }
    visit(dir)
    return loose
  }

  test('a data directory that exists with loose modes is made owner-only (and says so); what it writes is owner-only', async () => {
    const dataDir = tempDir()
    chmodSync(dataDir, 0o755)
    mkdirSync(join(dataDir, 'notes'), { mode: 0o755 })
    writeFileSync(join(dataDir, 'notes', 'readme.txt'), 'left by hand', { mode: 0o644 })
    const other = await startTestServer({}, { dataDir })
    try {
      const owner = newWallet()
      const feed = await createFeed(other.url, owner)
      await createEntry(other.url, owner, feed.id, {
        content_base64: b64(crypto.getRandomValues(new Uint8Array(300_000))),
        mime_type: 'application/pdf',
      })
      expect(other.logs.some((line) => line.includes('data directory permissions tightened'))).toBe(true)
      expect(looseModes(dataDir)).toEqual([])
    } finally {
      await other.dispose()
    }
  })

  test('the start line names the docs; on all interfaces without a public URL it warns that links would name localhost', async () => {
    const open = await startTestServer({ TRELLIS_HOST: '0.0.0.0' })
    try {
      const start = JSON.parse(open.logs.find((line) => listeningUrl(line))!)
      expect(start.docs).toBe(`${start.public_url}/v1/docs`)
      expect(open.logs.some((line) => line.includes('without a public URL') && JSON.parse(line).level === 'warn')).toBe(true)
    } finally {
      await open.dispose()
    }
    const named = await startTestServer({ TRELLIS_HOST: '0.0.0.0', TRELLIS_PUBLIC_URL: 'https://feeds.example.org' })
    try {
      expect(JSON.parse(named.logs.find((line) => listeningUrl(line))!).docs).toBe('https://feeds.example.org/v1/docs')
      expect(named.logs.some((line) => line.includes('without a public URL'))).toBe(false)
    } finally {
      await named.dispose()
    }
  })

  test('operations are counted by result: a verify that finds problems is "problems", not a success', async () => {
    const lines: unknown[] = []
    const record = operationRecord({
      info: (...args: unknown[]) => void lines.push(args),
      warn: (...args: unknown[]) => void lines.push(args),
    } as never)
    expect(await record.run('verify', async () => ({ ok: false }))).toEqual({ ok: false })
    await record.run('verify', async () => ({ ok: true }))
    await expect(
      record.run('gc', async () => {
        throw new Error('disk full')
      }),
    ).rejects.toThrow('disk full')
    const text = record.metrics().join('\n')
    expect(text).toContain('trellis_operations_total{command="verify",result="problems"} 1')
    expect(text).toContain('trellis_operations_total{command="verify",result="ok"} 1')
    expect(text).toContain('trellis_operations_total{command="gc",result="error"} 1')
    expect(text).toMatch(/^trellis_operation_last_success_timestamp_seconds\{command="verify"\} [\d.]+$/m)
    expect(text).not.toContain('last_success_timestamp_seconds{command="gc"}')
    expect(lines).toHaveLength(3)
    expect(lines[2]).toEqual(['operation ended', { command: 'gc', result: 'error', error: 'disk full', ms: expect.any(Number) }])
  })

  test('an operation that fails on the server logs why, at warn', async () => {
    const full = tempDir('trellis-full-')
    writeFileSync(join(full, 'something'), 'x')
    expect((await trellis(['backup', full], server.dataDir)).code).toBe(1)
    const ended = server.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'operation ended' && line.command === 'backup')
    expect(ended.at(-1)).toMatchObject({
      level: 'warn',
      result: 'error',
      error: `${full} is not empty: a backup goes into a new or empty directory`,
    })
  })

  test('SIGTERM again while stopping (a supervisor signals the group, npm forwards its own) does not cut the stop short', async () => {
    const server = await startTestServer()
    try {
      expect((await trellis(['verify'], server.dataDir)).code).toBe(0) // the operations worker is up: stopping takes longer
      process.kill(server.pid, 'SIGTERM')
      await Bun.sleep(5)
      process.kill(server.pid, 'SIGTERM')
      expect(await server.stop()).toBe(0) // a third, and the exit code
      expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true)
      expect(existsSync(join(server.dataDir, 'trellis.pid'))).toBe(false)
      expect(existsSync(join(server.dataDir, 'control.sock'))).toBe(false)
    } finally {
      await server.dispose()
    }
  })

  test('npm start is the server itself (exec): SIGTERM to npm, as a supervisor sends it, stops the server', async () => {
    const dataDir = tempDir()
    const npm = Bun.spawn(['npm', 'start', '--silent'], {
      cwd: join(import.meta.dir, '..'),
      env: { ...process.env, TRELLIS_DATA_DIR: dataDir, TRELLIS_PORT: '0', TRELLIS_HOST: '127.0.0.1', TRELLIS_RATE_LIMIT: 'off' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const url = await waitForLine(npm.stdout, listeningUrl, { timeoutMs: 30_000, what: 'npm start' })
    expect((await fetch(`${url}/health`)).status).toBe(200)
    const serverPid = Number(readFileSync(join(dataDir, 'trellis.pid'), 'utf8'))
    npm.kill('SIGTERM')
    await npm.exited
    const gone = async () => {
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(serverPid, 0)
        } catch {
          return true
        }
        await Bun.sleep(100)
      }
      return false
    }
    expect(await gone()).toBe(true)
  })
})
