// docs/compose/*.yml, proved without Docker (none runs here): each file is read as Compose reads it and validated
// against the Compose specification's JSON schema, then its services are started natively as the stack would start
// them: the same environment, the same health checks, the same nginx configuration and certificate step, in the order
// its depends_on conditions give. What cannot run natively stands in: PostgreSQL by dev/postgres.ts (the role and
// database the postgres image's entrypoint makes from its variables), MinIO by s3rver (dev/s3.ts), container
// addresses by 127.0.0.1 ports, volumes by temporary directories.
import { afterAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { commandOf, interpolate, loadCompose, schemaErrors, type Service } from '../dev/compose.ts'
import { forEachLine } from '../dev/lines.ts'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { startS3, S3RVER_CREDENTIALS, type S3Server } from '../dev/s3.ts'
import { SERVER_COMMAND } from '../dev/server.ts'
import { TEST_POSTGRES } from '../dev/test-database.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'

const ROOT = join(import.meta.dir, '..')
const COMPOSE = join(ROOT, 'docs', 'compose')
// The stacks start their own PostgreSQL, as the compose file does: once, in the embedded pass.
if (TEST_POSTGRES) console.log('compose.test.ts: native starts skipped: the stack runs its own PostgreSQL; the embedded pass runs them')

// Where the image puts the binary and the data volume (the Dockerfile's runtime stage): what the services name.
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const IMAGE_BINARY = /^COPY --from=build \/src\/dist\/trellis (\S+)$/m.exec(dockerfile)![1]!
const IMAGE_VOLUME = /^VOLUME \["([^"]+)"\]$/m.exec(dockerfile)![1]!
const IMAGE_PORT = /TRELLIS_PORT=(\d+)/.exec(dockerfile)![1]!

const scratch: string[] = []
const children: Subprocess[] = []
const cleanups: (() => Promise<void> | void)[] = []
const dir = (prefix: string) => {
  const made = mkdtempSync(join(tmpdir(), `trellis-compose-${prefix}-`))
  scratch.push(made)
  return made
}
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM')
  await Promise.all(children.map((child) => child.exited))
  for (const cleanup of cleanups.reverse()) await cleanup()
  for (const made of scratch) rmSync(made, { recursive: true, force: true })
})

function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

function spawn(command: string[], env: Record<string, string>, logs: string[]): Subprocess<'ignore', 'pipe', 'pipe'> {
  const child = Bun.spawn(command, { cwd: ROOT, env: { PATH: process.env.PATH!, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  children.push(child)
  forEachLine(child.stdout, (line) => logs.push(line))
  forEachLine(child.stderr, (line) => logs.push(line))
  return child
}

/** Runs a service's health check until it passes, as Docker would (here every 200 ms instead of its interval). */
async function healthy(service: string, command: string[], env: Record<string, string>, timeoutMs: number, logs: string[] = []) {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    const run = Bun.spawnSync(command, { cwd: ROOT, env: { PATH: process.env.PATH!, ...env }, stdout: 'pipe', stderr: 'pipe' })
    if (run.exitCode === 0) return
    last = `${run.stdout}${run.stderr}`
    await Bun.sleep(200)
  }
  throw new Error(`${service}: its healthcheck (${command.join(' ')}) did not pass: ${last}\n${logs.slice(-30).join('\n')}`)
}

/** A trellis service of the stack, as its container runs: the image's entrypoint with the service's environment. */
function startTrellis(name: string, service: Service, native: Record<string, string>) {
  expect(service.read_only).toBe(true) // the Dockerfile's test proves the image runs on a read-only root
  const port = freePort()
  const dataDir = dir(name)
  const env = {
    ...service.environment,
    ...native,
    // The image's ENV (TRELLIS_HOST=0.0.0.0, port 8402, the volume) on this host: loopback, a free port, a directory.
    TRELLIS_HOST: '127.0.0.1',
    TRELLIS_PORT: String(port),
    TRELLIS_DATA_DIR: dataDir,
    HOME: dir(`${name}-home`),
  }
  const logs: string[] = []
  spawn([...SERVER_COMMAND], env, logs)
  const check = commandOf(service.healthcheck!.test).flatMap((part) => (part === IMAGE_BINARY ? SERVER_COMMAND : [part]))
  return { url: `http://127.0.0.1:${port}`, port, dataDir, logs, ready: () => healthy(name, check, env, 30_000, logs) }
}

test("both files follow the Compose specification's schema, which refuses what Compose would", () => {
  const single = loadCompose(join(COMPOSE, 'single-node.yml'))
  const cluster = loadCompose(join(COMPOSE, 'cluster.yml'))
  expect(Object.keys(single.services)).toEqual(['trellis'])
  expect(Object.keys(cluster.services).sort()).toEqual(
    ['bucket', 'certificate', 'minio', 'postgres', 'proxy', 'trellis-1', 'trellis-2', 'trellis-3'].sort(),
  )
  // The check has teeth: a misspelt key and a malformed duration are refused.
  const errors = schemaErrors({ services: { a: { image: 'x', helthcheck: {}, healthcheck: { test: ['CMD', 'x'], interval: '5 sec' } } } })
  expect(errors.join('\n')).toContain('helthcheck')
  expect(errors.join('\n')).toContain('duration')
  // Every service with a health check, and every dependency on a state Compose knows.
  for (const [name, service] of Object.entries(cluster.services)) {
    if (!['bucket', 'certificate'].includes(name)) expect(service.healthcheck, name).toBeDefined()
    for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
      expect(cluster.services[dependency], `${name} depends on ${dependency}`).toBeDefined()
      expect(['service_healthy', 'service_completed_successfully']).toContain(condition)
    }
  }
  // Interpolation as Compose does it: a default when unset or empty, `$$` for a dollar, a required one stops it.
  const d = '$' // Compose's syntax, spelt so it reads as no template placeholder
  expect(interpolate(`${d}{A:-x} ${d}{B-y} ${d}${d}A ${d}{C}`, { A: '', B: '' })).toBe('x  $A ')
  expect(() => interpolate(`${d}{A:?set A}`, {})).toThrow('A: set A')
})

test.skipIf(Boolean(TEST_POSTGRES))(
  'single-node.yml: the service starts natively on its volume and its healthcheck passes',
  async () => {
    const file = loadCompose(join(COMPOSE, 'single-node.yml'), { TRELLIS_PUBLIC_URL: 'https://feeds.example.com' })
    const service = file.services.trellis!
    // The named volume is mounted where the image keeps its data, so the data outlives the container.
    expect(service.volumes).toEqual([`trellis-data:${IMAGE_VOLUME}`])
    expect(service.ports).toEqual([`127.0.0.1:8402:${IMAGE_PORT}`]) // published to the port the image listens on
    expect(file.volumes).toHaveProperty('trellis-data')
    expect(service.environment!.TRELLIS_PUBLIC_URL).toBe('https://feeds.example.com')
    const node = startTrellis('single', service, {})
    await node.ready()
    const health = await (await fetch(`${node.url}/health`)).json()
    expect(health).toHaveProperty('instance')
    const manifest = await fetch(`${node.url}/.well-known/x402`).then((r) => r.text())
    expect(manifest).toContain('https://feeds.example.com') // the public URL reached the server
    expect(readdirSync(node.dataDir).length).toBeGreaterThan(0) // and its records went to the volume
  },
  60_000,
)

test.skipIf(Boolean(TEST_POSTGRES))(
  'cluster.yml: PostgreSQL, the store, three instances and nginx with TLS start natively; a write on one reads on another',
  async () => {
    // What stands in for the images' own programs (npm test's pretest installs them from Debian when missing).
    for (const [command, pkg] of [
      ['nginx', 'nginx-light'],
      ['openssl', 'openssl'],
      ['curl', 'curl'],
      ['pg_isready', 'postgresql'],
    ])
      if (!Bun.which(command, { PATH: `${process.env.PATH}:/usr/sbin` })) throw new Error(`${command} is missing: apt-get install ${pkg}`)
    const cluster = loadCompose(join(COMPOSE, 'cluster.yml'), { POSTGRES_PASSWORD: 'pg-secret' })
    const s = cluster.services
    // postgres: the role and database its image's entrypoint makes from POSTGRES_USER, _PASSWORD and _DB.
    const postgres: Postgres = await startPostgres()
    cleanups.push(() => postgres.stop())
    const pg = s.postgres!.environment!
    const admin = new SQL(postgres.adminUrl, { max: 1 })
    await admin.unsafe(`CREATE ROLE ${pg.POSTGRES_USER} LOGIN PASSWORD '${pg.POSTGRES_PASSWORD}'`)
    await admin.unsafe(`CREATE DATABASE ${pg.POSTGRES_DB} OWNER ${pg.POSTGRES_USER}`)
    await admin.close()
    await healthy('postgres', [...commandOf(s.postgres!.healthcheck!.test), '-h', '127.0.0.1', '-p', String(postgres.port)], {}, 10_000)

    // minio and its bucket step: s3rver makes the bucket the step makes, the one the instances name.
    const s3: S3Server = await startS3()
    cleanups.push(() => s3.stop())
    const bucketStep = commandOf(s.bucket!.command!).join(' ')
    expect(bucketStep).toContain(`mc mb --ignore-existing store/${s3.bucket}`)

    // certificate: its own command, the certs volume a directory.
    const certs = dir('certs')
    const certStep = [...commandOf(s.certificate!.entrypoint!), ...commandOf(s.certificate!.command!)]
    const made = Bun.spawnSync(
      certStep.map((part) => part.replaceAll('/certs/', `${certs}/`)),
      { stdout: 'pipe', stderr: 'pipe' },
    )
    expect(made.exitCode, made.stderr.toString()).toBe(0)
    expect(existsSync(join(certs, 'cert.pem')) && existsSync(join(certs, 'key.pem'))).toBe(true)

    // The three instances, each with its service's environment, container names made this host's addresses.
    const proxyPort = freePort()
    const names = ['trellis-1', 'trellis-2', 'trellis-3']
    const instances = names.map((name) => {
      const env = s[name]!.environment!
      const database = new URL(env.TRELLIS_DATABASE_URL!)
      expect(database.host).toBe('postgres:5432')
      expect(decodeURIComponent(database.password)).toBe('pg-secret') // the stack's one password, in both services
      database.host = `127.0.0.1:${postgres.port}`
      const content = new URL(env.TRELLIS_CONTENT_URL!)
      expect([content.host, content.searchParams.get('endpoint')]).toEqual([s3.bucket, 'http://minio:9000'])
      content.searchParams.set('endpoint', s3.endpoint)
      expect([env.S3_ACCESS_KEY_ID, env.S3_SECRET_ACCESS_KEY]).toEqual([
        s.minio!.environment!.MINIO_ROOT_USER,
        s.minio!.environment!.MINIO_ROOT_PASSWORD,
      ])
      expect(env.TRELLIS_TRUST_PROXY).toBe('on')
      return startTrellis(name, s[name]!, {
        TRELLIS_DATABASE_URL: database.href,
        TRELLIS_CONTENT_URL: content.href,
        ...S3RVER_CREDENTIALS, // s3rver takes only its own key; MinIO takes the stack's root user
        TRELLIS_PUBLIC_URL: `https://localhost:${proxyPort}`, // what the operator sets: the proxy's address
      })
    })
    await Promise.all(instances.map((instance) => instance.ready()))

    // proxy: the stack's nginx.conf with the instances' and certificates' places on this host.
    const proxy = dir('nginx')
    const mounts = Object.fromEntries(s.proxy!.volumes!.map((volume) => volume.split(':').slice(0, 2).reverse()))
    expect(mounts['/etc/nginx/nginx.conf']).toBe('./nginx.conf')
    expect(mounts['/etc/nginx/certs']).toBe('certs')
    const config = readFileSync(join(COMPOSE, 'nginx.conf'), 'utf8')
      .replace(
        new RegExp(`server (trellis-\\d):${IMAGE_PORT};`, 'g'),
        (_, name: string) => `server 127.0.0.1:${instances[names.indexOf(name)]!.port};`,
      )
      .replace('listen 443 ssl;', `listen 127.0.0.1:${proxyPort} ssl;`)
      .replaceAll('/etc/nginx/certs/', `${certs}/`)
      .replace(
        'http {',
        ['http {', ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `  ${k}_temp_path ${proxy}/${k};`)].join('\n'),
      )
    expect(config).not.toMatch(/^\s*server trellis-/m) // every upstream found its instance
    writeFileSync(
      join(proxy, 'nginx.conf'),
      [`daemon off;`, `pid ${proxy}/nginx.pid;`, `error_log ${proxy}/error.log warn;`, config].join('\n'),
    )
    const proxyLogs: string[] = []
    spawn(['nginx', '-p', proxy, '-c', join(proxy, 'nginx.conf'), '-e', join(proxy, 'error.log')], {}, proxyLogs)
    const proxyCheck = commandOf(s.proxy!.healthcheck!.test).map((part) =>
      part.replace('https://localhost/', `https://localhost:${proxyPort}/`),
    )
    await healthy('proxy', proxyCheck, {}, 15_000, proxyLogs)

    // Through the proxy, over TLS with the stack's certificate: round robin over the three instances.
    const tls = { ca: readFileSync(join(certs, 'cert.pem'), 'utf8') }
    const viaProxy = (path: string, init: RequestInit = {}) => fetch(`https://localhost:${proxyPort}${path}`, { ...init, tls })
    const seen = new Set<string>()
    for (let i = 0; i < 6; i++) seen.add(((await (await viaProxy('/health')).json()) as { instance: string }).instance)
    expect(seen.size).toBe(3)

    // A write on trellis-1, read on trellis-2 and through the proxy: one database, one bucket.
    const creator = newWallet()
    const feed = await createFeed(instances[0]!.url, creator, { name: 'compose' })
    const entry = await createEntry(instances[0]!.url, creator, feed.id, { content_base64: b64('from the stack') })
    const path = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
    const onTwo = await call(instances[1]!.url, 'GET', path, { wallet: creator })
    expect(onTwo.status, onTwo.text).toBe(200)
    expect(onTwo.text).toBe('from the stack')
    expect(await (await viaProxy(`/v1/feeds/${feed.id}`)).json()).toMatchObject({ id: feed.id })
    // The content went to the bucket, not the database.
    const { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey } = S3RVER_CREDENTIALS
    const bucket = new Bun.S3Client({ accessKeyId, secretAccessKey, bucket: s3.bucket, endpoint: s3.endpoint })
    expect((await bucket.list({ prefix: 'blocks/' })).contents?.length ?? 0).toBeGreaterThan(0)
  },
  90_000,
)
