// A throwaway PostgreSQL cluster for tests: initdb in a temporary folder, pg_ctl on 127.0.0.1 at a free port, trust
// authentication for the `postgres` role, no systemd. As root (CI), the server runs as Debian's `postgres` user, which
// the postgresql package creates; initdb refuses to run as root. `stop()` stops it and removes the folder.
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Postgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  adminUrl: string
  port: number
  /** A URL of the same cluster for another database. */
  urlOf(database: string): string
  /** Stops the server (fast: open sessions are ended), keeping its data; `resume` starts it again on the same port. */
  halt(): void
  /** Stops the server as a crash would (immediate: no checkpoint), keeping its data; `resume` recovers it. */
  crash(): void
  resume(): void
  stop(): Promise<void>
}

/** Where initdb and pg_ctl are: $PG_BIN, the newest /usr/lib/postgresql/<version>/bin (Debian), or the PATH. */
export function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length > 0) return join(root, versions[0]!, 'bin')
  const found = Bun.which('initdb')
  if (!found) throw new Error("no PostgreSQL server here: install Debian's postgresql (npm test's pretest does) or set PG_BIN")
  return join(found, '..')
}

export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

/**
 * A new directory for a cluster (`prefix`), owned by the user PostgreSQL runs as, and `run`, which runs a PostgreSQL
 * program as that user and throws with its output when it fails: as root, Debian's `postgres` (PostgreSQL refuses to
 * run as root); else whoever runs this.
 */
export function clusterDirectory(prefix: string): { dir: string; run(command: string[]): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const id = (flag: string) => Bun.spawnSync(['id', flag, 'postgres']).stdout.toString().trim()
    if (!id('-u'))
      throw new Error("running as root, and there is no postgres user to run the server as (Debian's postgresql package makes one)")
    chownSync(dir, Number(id('-u')), Number(id('-g')))
  }
  chmodSync(dir, 0o700)
  const as = (command: string[]) => (asRoot ? ['runuser', '-u', 'postgres', '--', ...command] : command)
  return {
    dir,
    run(command) {
      const result = Bun.spawnSync(as(command), { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, LC_ALL: 'C.UTF-8' } })
      if (result.exitCode !== 0)
        throw new Error(`${command.join(' ')} failed (exit ${result.exitCode}): ${result.stderr.toString()}${result.stdout.toString()}`)
    },
  }
}

/**
 * `settings`: more server settings (`name=value`), e.g. a benchmark's shared_preload_libraries=pg_stat_statements;
 * `port`: where to listen (default: a free one).
 */
export async function startPostgres(wanted: { settings?: string[]; port?: number } = {}): Promise<Postgres> {
  const settings = wanted.settings ?? []
  const bin = postgresBin()
  const { dir, run } = clusterDirectory('trellis-pg-')
  const data = join(dir, 'data')
  run([join(bin, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = wanted.port ?? freePort()
  const options = [
    `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=200`,
    ...settings.map((s) => `-c ${s}`),
  ].join(' ')
  const start = () => run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
  start()
  const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  let stopped = false
  return {
    adminUrl: urlOf('postgres'),
    port,
    urlOf,
    halt: () => run([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']),
    crash: () => run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']),
    resume: start,
    async stop() {
      if (stopped) return
      stopped = true
      try {
        run([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

if (import.meta.main) {
  // bun dev/postgres.ts [port]: a throwaway cluster until Ctrl-C (or SIGTERM), then removed; prints its admin URL.
  const port = process.argv[2] ? Number(process.argv[2]) : undefined
  const postgres = await startPostgres({ port })
  console.log(postgres.adminUrl)
  const stop = async () => {
    await postgres.stop()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  setInterval(() => {}, 1 << 30)
}
