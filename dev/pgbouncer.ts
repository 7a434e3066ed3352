// A throwaway PgBouncer (Debian's `pgbouncer`, 1.18 on bookworm) in transaction mode, in front of a test cluster
// (dev/postgres.ts): its own ini in a temporary folder, a foreground child process on 127.0.0.1 at a free port,
// trust authentication (the auth file names the one role, `postgres`), and every database of the cluster reachable
// through it by its own name (the `*` entry), so a test database made after it started is pooled too.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Pooler {
  port: number
  /** The URL of `direct` (a URL of the cluster behind it) through this pooler: same user and database. */
  pooled(direct: string): string
  stop(): Promise<void>
}

/** Where the pgbouncer program is: on the PATH, or where Debian puts it (/usr/sbin, off a user's PATH). */
export function pgbouncerBin(): string {
  const found = Bun.which('pgbouncer') ?? (existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : null)
  if (!found) throw new Error("no pgbouncer here: install Debian's pgbouncer (npm test's pretest does)")
  return found
}

function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

/** `serverPort`: the cluster's port on 127.0.0.1. */
export async function startPgBouncer(serverPort: number): Promise<Pooler> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-pgbouncer-'))
  const port = freePort()
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n')
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${serverPort}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      `unix_socket_dir =`,
      `auth_type = trust`,
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Test databases come and go by the hundred: their pools and idle server connections must not pile up.
      'max_client_conn = 2000',
      'default_pool_size = 10',
      'server_idle_timeout = 5',
      'autodb_idle_timeout = 30',
      // What clients may send at start that PgBouncer 1.18 does not track itself (Bun sends none of these by default).
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'log')}`,
      '',
    ].join('\n'),
  )
  // As root PgBouncer refuses to run unless told whom to become (-u): Debian's postgres user, as for the cluster. Its
  // own -u rather than runuser, so the child is PgBouncer itself and stop() signals it (runuser would not pass it on).
  const asRoot = process.getuid?.() === 0
  if (asRoot) Bun.spawnSync(['chown', '-R', 'postgres:postgres', dir])
  const proc = Bun.spawn([pgbouncerBin(), ...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  for (let tries = 0; ; tries++) {
    const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then(
      (socket) => (socket.end(), true),
      () => false,
    )
    if (ok) break
    if (proc.exitCode !== null || tries > 100) {
      proc.kill()
      const log = existsSync(join(dir, 'log')) ? await Bun.file(join(dir, 'log')).text() : ''
      rmSync(dir, { recursive: true, force: true })
      throw new Error(`pgbouncer did not start: ${await new Response(proc.stderr).text()}${log}`)
    }
    await Bun.sleep(50)
  }
  let stopped = false
  return {
    port,
    pooled(direct) {
      const url = new URL(direct)
      url.port = String(port)
      return url.toString()
    },
    async stop() {
      if (stopped) return
      stopped = true
      proc.kill('SIGTERM') // PgBouncer: an immediate shutdown (SIGINT would wait for its clients)
      await Promise.race([proc.exited, Bun.sleep(3000)])
      if (proc.exitCode === null) proc.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
