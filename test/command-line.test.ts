// The operator's side of `trellis`: errors that name what was typed, per-command options, the version with its
// commit, and test hooks that do nothing unless allowed.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { parseCommand } from '../src/command-line.ts'
import { VERSION } from '../src/version.ts'
import { configFrom } from '../src/config.ts'
import { NETWORK_NAMES } from '../src/config/networks.ts'
import { startTestServer } from '../dev/server.ts'
import { call, newWallet } from '../dev/api.ts'

const ROOT = join(import.meta.dir, '..')

/** `bun src/main.ts <args>` with only the environment given (and PATH, HOME): exit code and output. */
async function trellis(args: string[], env: Record<string, string> = {}) {
  const run = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  return { code, stdout, stderr }
}

const refusal = (argv: string[], env: Record<string, string> = {}) => {
  try {
    parseCommand(argv, env)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${argv.join(' ')} was accepted`)
}

describe('flags and commands', () => {
  test('an error names what was typed: the flag for a flag, the variable for the environment', () => {
    expect(refusal(['--network', 'foo'])).toBe(`--network must be one of ${NETWORK_NAMES.join(', ')}`)
    expect(refusal([], { TRELLIS_NETWORK: 'foo' })).toBe(`TRELLIS_NETWORK must be one of ${NETWORK_NAMES.join(', ')}`)
    expect(refusal(['--networks', 'base-sepolia,foo'])).toStartWith('--networks names "foo": known networks are base, base-sepolia,')
    expect(refusal(['--port=eighty'])).toBe('--port must be an integer, got "eighty"')
    expect(refusal(['serve', '--public-url', 'ftp://x'])).toBe('--public-url must be an http(s) URL')
    expect(refusal(['--host', 'not_a_host!'])).toBe('--host must be an IP address or a host name, got "not_a_host!"')
    expect(refusal([], { TRELLIS_HOST: 'a b' })).toBe('TRELLIS_HOST must be an IP address or a host name, got "a b"')
    // A flag wins over the variable, also over a bad one.
    expect(parseCommand(['--network', 'base'], { TRELLIS_NETWORK: 'foo' })).toMatchObject({
      kind: 'serve',
      config: { network: { name: 'base' } },
    })
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'feeds.example.org', '192.168.1.20'])
      expect(parseCommand(['--host', host], {})).toMatchObject({ config: { host } })
  })

  test('where records and content live: the embedded default, PostgreSQL for both, LevelDB beside PostgreSQL refused', () => {
    const db = 'postgres://trellis:pw@db.example:5432/market'
    expect(parseCommand([], {})).toMatchObject({ config: { databaseUrl: null, content: 'leveldb' } })
    expect(parseCommand(['--database-url', db], {})).toMatchObject({ config: { databaseUrl: db, content: 'postgres' } })
    expect(parseCommand([], { TRELLIS_DATABASE_URL: db, TRELLIS_CONTENT_URL: 'postgres' })).toMatchObject({
      config: { content: 'postgres' },
    })
    expect(refusal(['--database-url', db, '--content-url', 'leveldb'])).toStartWith(
      'content in leveldb is refused with records in PostgreSQL',
    )
    expect(refusal([], { TRELLIS_CONTENT_URL: 'postgres' })).toBe(
      "content in postgres means the records' PostgreSQL: set --database-url (TRELLIS_DATABASE_URL) too",
    )
    expect(refusal(['--content-url', 's4://x'])).toBe('--content-url must be leveldb, postgres or s3://bucket/prefix?endpoint=…&region=…')
    // An S3-compatible bucket, indexed in the records' PostgreSQL: its parts, and what is refused.
    const s3 = 's3://media/trellis/blocks?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-1'
    expect(parseCommand(['--database-url', db, '--content-url', s3], {})).toMatchObject({
      config: {
        content: {
          kind: 's3',
          bucket: 'media',
          prefix: 'trellis/blocks/',
          endpoint: 'http://127.0.0.1:9000',
          region: 'eu-1',
          virtualHostedStyle: false,
        },
      },
    })
    expect(refusal(['--content-url', s3])).toStartWith("content in S3 is indexed in the records' PostgreSQL")
    expect(refusal(['--database-url', db, '--content-url', 's3://key:secret@media/x'])).toBe(
      '--content-url must not hold the S3 credentials: give them in the environment (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)',
    )
    expect(refusal(['--database-url', db, '--content-url', 's3://media/x?acl=public'])).toBe(
      '--content-url has an unknown option acl (known: endpoint, region, virtual_hosted_style)',
    )
    expect(refusal(['--database-url', db, '--content-url', 's3://media/x?endpoint=ftp%3A%2F%2Fh'])).toBe(
      '--content-url needs an http:// or https:// endpoint',
    )
    expect(refusal([], { TRELLIS_DATABASE_URL: 'mysql://x/y' })).toBe('TRELLIS_DATABASE_URL must be a postgres:// URL, got a mysql: one')
    // A flag wins over its variable.
    expect(parseCommand(['--content-url', 'postgres'], { TRELLIS_DATABASE_URL: db, TRELLIS_CONTENT_URL: 'leveldb' })).toMatchObject({
      config: { content: 'postgres' },
    })
  })

  test('each command takes its own options only; unknown ones, missing values and stray arguments are refused', () => {
    expect(refusal(['--bogus'])).toBe('unknown option --bogus for trellis serve (see trellis --help)')
    expect(refusal(['serve', '--out', 'x.car'])).toBe('unknown option --out for trellis serve (see trellis --help)')
    expect(refusal(['gc', '--out', 'x.car'])).toBe('unknown option --out for trellis gc (see trellis --help)')
    expect(refusal(['export-car', 'bafy', '--out', 'x.car', '--dry-run'])).toBe(
      'unknown option --dry-run for trellis export-car (see trellis --help)',
    )
    expect(refusal(['verify', '-x'])).toBe('unknown option -x for trellis verify (see trellis --help)')
    expect(refusal(['gc', '--dry-run=yes'])).toBe('--dry-run takes no value')
    expect(refusal(['--data-dir'])).toBe('--data-dir needs a value')
    expect(refusal(['--data-dir', '--port', '1'])).toBe('--data-dir needs a value')
    expect(refusal(['export-car', 'bafy', '--out'])).toBe('--out needs a value')
    expect(refusal(['frobnicate'])).toBe('unknown command "frobnicate" (see trellis --help)')
    expect(refusal(['verify', 'extra'])).toBe('trellis verify takes no argument "extra" (see trellis --help)')
    expect(refusal(['--port', '1', 'extra'])).toBe('trellis serve takes no argument "extra" (see trellis --help)')

    expect(parseCommand(['gc', '--dry-run', '--data-dir', '/d'], {})).toMatchObject({
      kind: 'data',
      command: 'gc',
      args: ['--dry-run'],
      config: { dataDir: '/d' },
    })
    expect(parseCommand(['restore', '--replace-nul', '/b', '--database-url', 'postgres://db/m'], {})).toMatchObject({
      kind: 'data',
      command: 'restore',
      args: ['/b', '--replace-nul'],
    })
    expect(parseCommand(['migrate-to-postgres', '--replace-nul'], {})).toMatchObject({
      kind: 'data',
      command: 'migrate-to-postgres',
      args: ['--replace-nul'],
    })
    expect(refusal(['backup', '/b', '--replace-nul'])).toBe('unknown option --replace-nul for trellis backup (see trellis --help)')
    expect(parseCommand(['export-car', 'bafy1', '--out=x.car', 'bafy2', '--port', '9'], {})).toMatchObject({
      kind: 'data',
      command: 'export-car',
      args: ['bafy1', 'bafy2'],
      out: 'x.car',
      config: { port: 9 },
    })
    expect(parseCommand(['backup', '--', '-odd-name'], {})).toMatchObject({ kind: 'data', command: 'backup', args: ['-odd-name'] })
    expect(parseCommand(['verify-ledger', '--network', 'base'], {})).toMatchObject({
      kind: 'verify-ledger',
      config: { network: { name: 'base' } },
    })
    for (const argv of [['version'], ['--version'], ['-v'], ['gc', '-v']]) expect(parseCommand(argv, {})).toEqual({ kind: 'version' })
    for (const argv of [['help'], ['--help'], ['-h'], ['gc', '--bogus', '--help']]) expect(parseCommand(argv, {})).toEqual({ kind: 'help' })
  })

  test('as the operator sees it: one line naming the flag, exit 2; `trellis version` names the commit', async () => {
    const [network, bogus, host, version, help] = await Promise.all([
      trellis(['--network', 'foo']),
      trellis(['gc', '--bogus']),
      trellis(['--host', 'not_a_host!', '--port', '0']),
      trellis(['version']),
      trellis(['gc', '--help']),
    ])
    expect([network.code, network.stderr]).toEqual([2, `trellis: --network must be one of ${NETWORK_NAMES.join(', ')}\n`])
    expect([bogus.code, bogus.stderr]).toEqual([2, 'trellis: unknown option --bogus for trellis gc (see trellis --help)\n'])
    expect([host.code, host.stderr]).toEqual([2, 'trellis: --host must be an IP address or a host name, got "not_a_host!"\n'])
    const commit = Bun.spawnSync(['git', 'rev-parse', '--short=7', 'HEAD'], { cwd: ROOT }).stdout.toString().trim()
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(new RegExp(`^trellis \\d+\\.\\d+\\.\\d+ \\(commit ${commit}(-dirty)?, from source\\)\\n$`))
    expect(help.code).toBe(0)
    for (const text of ['--out <file.car>', '--dry-run', 'trellis version', 'TRELLIS_TEST_HOOKS']) expect(help.stdout).toContain(text)
  })
})

describe('the commit a build names', () => {
  test('TRELLIS_BUILD_COMMIT wins over git, and names the commit where there is no git to ask', async () => {
    const noGit = { GIT_DIR: '/nonexistent', GIT_CEILING_DIRECTORIES: '/' } // as a source tarball: nothing for git to find
    const [named, unnamed, overGit, blank, bad] = await Promise.all([
      trellis(['version'], { ...noGit, TRELLIS_BUILD_COMMIT: 'a1b2c3d' }),
      trellis(['version'], noGit),
      trellis(['--version'], { TRELLIS_BUILD_COMMIT: 'v0.1.0-3-ga1b2c3d' }),
      trellis(['version'], { ...noGit, TRELLIS_BUILD_COMMIT: ' ' }),
      trellis(['version'], { TRELLIS_BUILD_COMMIT: 'a1b2c3d, built tomorrow' }),
    ])
    expect([named.code, named.stdout]).toEqual([0, `trellis ${VERSION} (commit a1b2c3d, from source)\n`])
    expect([unnamed.code, unnamed.stdout]).toEqual([0, `trellis ${VERSION} (commit unknown, from source)\n`])
    expect([overGit.code, overGit.stdout]).toEqual([0, `trellis ${VERSION} (commit v0.1.0-3-ga1b2c3d, from source)\n`])
    expect(blank.stdout).toBe(`trellis ${VERSION} (commit unknown, from source)\n`) // empty, as an ARG given no value, is unset
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([
      2,
      '',
      'trellis: TRELLIS_BUILD_COMMIT must be a commit hash or name (letters, digits, . _ + -, at most 64), got "a1b2c3d, built tomorrow"\n',
    ])
  })
})

describe('test hooks', () => {
  test('from source they act only with TRELLIS_TEST_HOOKS=1', () => {
    const hooks = {
      TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1',
      TRELLIS_TEST_CLOCK_OFFSET_S: '600',
      TRELLIS_TEST_CLOCK_FILE: '/tmp/clock',
      TRELLIS_TEST_CRASH_AFTER_SETTLE: '1',
    }
    expect(configFrom(hooks)).toMatchObject({
      allowPrivateFetch: false,
      clockOffsetS: 0,
      clockFile: null,
      crashAfterSettle: false,
      testHooks: { allowed: false, set: Object.keys(hooks) },
    })
    expect(configFrom({ ...hooks, TRELLIS_TEST_HOOKS: '1' })).toMatchObject({
      allowPrivateFetch: true,
      clockOffsetS: 600,
      clockFile: '/tmp/clock',
      crashAfterSettle: true,
      testHooks: { allowed: true },
    })
  })

  test('a server given a hook without the allow keeps its SSRF guard and says the hook is ignored', async () => {
    const image = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]), {
          headers: { 'content-type': 'image/png' },
        }),
    })
    const server = await startTestServer({ TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1', TRELLIS_TEST_HOOKS: '' })
    try {
      const reply = await call(server.url, 'POST', '/v1/feeds', {
        wallet: newWallet(),
        body: { name: 'ssrf', image_url: `http://127.0.0.1:${image.port}/cover.png` },
      })
      expect(reply.status).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_request', details: { field: 'image_url' } })
      const warning = server.logs.map((line) => JSON.parse(line)).find((line) => line.msg?.startsWith('test hooks'))
      expect(warning).toMatchObject({
        level: 'warn',
        msg: 'test hooks ignored: test hooks need TRELLIS_TEST_HOOKS=1',
        hooks: ['TRELLIS_TEST_ALLOW_PRIVATE_FETCH'],
      })
    } finally {
      image.stop(true)
      await server.dispose()
    }
  })
})
