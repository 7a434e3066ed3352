// A streaming replica of a throwaway cluster (dev/postgres.ts) for tests: `pg_basebackup -R` from the primary on
// 127.0.0.1 into a temporary folder, then the copy started as a hot standby on a port of its own. It needs what
// initdb gives the primary by default on PostgreSQL ≥ 10: wal_level=replica, max_wal_senders=10, and with --auth=trust
// a `host replication all 127.0.0.1/32 trust` line in pg_hba.conf. As root (CI), it runs as Debian's `postgres` user,
// as the primary does. `stop()` stops it and removes the folder.
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { clusterDirectory, freePort, postgresBin } from './postgres.ts'

export interface Replica {
  port: number
  /** The replica's URL for a database of the primary. */
  urlOf(database: string): string
  /** Replay stops where it is (WAL still arrives): the replica falls behind with every commit on the primary. */
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  /** Stops the replica as a crash would (pg_ctl stop -m immediate); `resume` starts it again on the same port. */
  crash(): void
  resume(): void
  /** Every process of it stopped (SIGSTOP): it hangs, connections open and unanswered, until `thaw` (SIGCONT). */
  freeze(): void
  thaw(): void
  /** What its server wrote to its log so far (with `log_statement=all` among the settings: every statement). */
  log(): string
  /** Its postmaster's pid (for scripts/bench/resources.ts's clusterUsage). */
  postmasterPid(): number
  stop(): Promise<void>
}

/**
 * A hot standby of the cluster at 127.0.0.1:`primaryPort` (role postgres, trust), caught up before it returns.
 * `settings`: more server settings (`name=value`, no spaces), e.g. log_statement=all.
 */
export async function startReplica(primaryPort: number, settings: string[] = []): Promise<Replica> {
  const bin = postgresBin()
  const { dir, run } = clusterDirectory('trellis-replica-')
  const data = join(dir, 'data')
  // -R writes standby.signal and primary_conninfo; -X stream copies the WAL written meanwhile.
  run([
    join(bin, 'pg_basebackup'),
    '-h',
    '127.0.0.1',
    '-p',
    String(primaryPort),
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
  ])
  const port = freePort()
  const options = [
    `listen_addresses=127.0.0.1`,
    `port=${port}`,
    `unix_socket_directories=${dir}`,
    'max_connections=200',
    'hot_standby=on',
    ...settings,
  ]
    .map((setting) => `-c ${setting}`)
    .join(' ')
  const start = () => run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
  start()
  const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  const admin = async <T>(statement: string): Promise<T> => {
    const sql = new SQL(urlOf('postgres'), { max: 1 })
    try {
      return (await sql.unsafe(statement)) as T
    } finally {
      await sql.close()
    }
  }
  // Caught up: it replayed what the primary had written once it answers (the backup ended at a checkpoint).
  const primary = new SQL(`postgres://postgres@127.0.0.1:${primaryPort}/postgres`, { max: 1 })
  try {
    const [{ position }] = await primary.unsafe('SELECT pg_current_wal_insert_lsn()::text AS position')
    for (let tries = 0; ; tries++) {
      const [{ caught }] = await admin<Array<{ caught: boolean }>>(
        `SELECT COALESCE(pg_last_wal_replay_lsn() >= '${position}'::pg_lsn, false) AS caught`,
      ).catch(() => [{ caught: false }])
      if (caught) break
      if (tries > 300) throw new Error(`the replica on port ${port} did not catch up in 30 s`)
      await Bun.sleep(100)
    }
  } finally {
    await primary.close()
  }
  const postmasterPid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0])
  let stopped = false
  return {
    port,
    urlOf,
    pauseReplay: () => admin('SELECT pg_wal_replay_pause()'),
    resumeReplay: () => admin('SELECT pg_wal_replay_resume()'),
    crash: () => run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']),
    resume: start,
    log: () => readFileSync(join(dir, 'log'), 'utf8'),
    freeze: () => signalAll(postmasterPid(), 'SIGSTOP'),
    thaw: () => signalAll(postmasterPid(), 'SIGCONT'),
    postmasterPid,
    async stop() {
      if (stopped) return
      stopped = true
      try {
        run([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'])
      } catch {
        // already stopped (crashed and not resumed)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/** `signal` to a postmaster and each process it started (found by their parent in /proc). */
function signalAll(postmaster: number, signal: NodeJS.Signals): void {
  const children = readdirSync('/proc').filter((pid) => {
    if (!/^\d+$/.test(pid)) return false
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster
    } catch {
      return false
    }
  })
  for (const pid of [postmaster, ...children.map(Number)]) process.kill(pid, signal)
}
