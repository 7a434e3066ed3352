// The records port on PostgreSQL, through Bun's built-in SQL client and its pool. Each `transact` is one transaction
// of its own (PostgreSQL batches concurrent commits itself), retried when PostgreSQL gives it up to let another pass
// (serialization failure, deadlock); its work must therefore be safe to run again, which holds since it awaits only
// its `tx`. Lazy durability is `SET LOCAL synchronous_commit = off`: the commit may be lost by a crash of the
// server, never reordered. The version moves once per commit on this instance (but an `unkept` one), and with a
// change feed once per commit another instance on the database makes.
import type { SQL } from 'bun'
import { randomUUID } from 'node:crypto'
import { localChanges, type Changes, type Lease, type Records, type StoresOn, type Upkeep, type WriteOptions } from '../records.ts'
import { postgresSql } from './sql.ts'
import { exportToSqlite, importFromSqlite } from './transfer.ts'
import { checkIndexes } from './integrity.ts'
import { postgresFault } from './faults.ts'
import type { ChangeFeed } from './change-feed.ts'
import { postgresCluster, postgresSnapshots } from './cluster.ts'
import { postgresBlockSpaces } from './blocks/spaces.ts'
import { claimedSecret } from '../secret.ts'
import { wroteRecords } from '../../lib/fresh-reads.ts'
import type { ReplicaRouting } from './replicas.ts'

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRIED = new Set(['40001', '40P01'])
const ATTEMPTS = 3
/** How often a lease's connection is asked whether it is still there. */
const LEASE_WATCH_MS = 500

const sqlState = (error: unknown) => (error as { errno?: unknown })?.errno

/**
 * `feed`: the change feed of the instances on this database (change-feed.ts); without one, only this process's
 * commits count. `instance`: the id its connections carry (a new one when not given). `leaseClient`: makes the
 * client of one connection each lease name is tried and held on (kept for the next try, closed with the records),
 * so a lease held for long (the leader's) takes none of `sql`'s pool; without it a lease reserves one of `sql`'s.
 * `tagged`: `sql`'s connections do not carry `instance` (a pooler refuses the startup parameter): each transaction
 * sets it itself, in its first statement, for the change feed's triggers. A `single` statement, which is a
 * transaction of its own, then notifies as any writer's: this instance hears its own write, and drops its memo once more.
 * `replicas`: read replicas (replicas.ts), told of the changes heard: they serve `reads` and `snapshot` when fit.
 */
export function postgresRecords<Stores>(
  sql: SQL,
  storesOn: StoresOn<Stores>,
  {
    feed = null,
    instance = randomUUID(),
    leaseClient,
    tagged = false,
    replicas,
  }: {
    feed?: ChangeFeed | null
    instance?: string
    leaseClient?: () => SQL
    tagged?: boolean
    replicas?: (changes: Changes) => ReplicaRouting
  } = {},
): Records<Stores> {
  const held = new Set<Lease>()
  const leaseClients = new Map<string, SQL>()
  const leaseClientOf = (name: string): SQL => {
    if (!leaseClient) return sql
    let client = leaseClients.get(name)
    if (!client) leaseClients.set(name, (client = leaseClient()))
    return client
  }
  const { changes, committed } = feed ?? localChanges()

  /** `work` until it commits, or fails for a reason other than PostgreSQL giving it up to let another pass. */
  async function committing<T>(work: () => Promise<T>, { unkept = false }: WriteOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const value = await work()
        if (!unkept) {
          committed()
          wroteRecords() // the answer of the request it is part of (if any) carries a version: edge/read-your-writes.ts
        }
        return value
      } catch (error) {
        if (attempt >= ATTEMPTS || !RETRIED.has(sqlState(error) as string)) throw postgresFault(error)
      }
    }
  }

  const transact = <T>(work: (tx: Stores) => Promise<T>, options: WriteOptions = {}) =>
    committing(
      () =>
        sql.begin(async (tx) => {
          const lazy = options.durability === 'lazy'
          // One statement for both settings: through a pooler each one is a round trip more per transaction.
          if (tagged)
            await tx.unsafe(
              `SELECT set_config('trellis.instance', $1, true)${lazy ? ", set_config('synchronous_commit', 'off', true)" : ''}`,
              [instance],
            )
          else if (lazy) await tx.unsafe('SET LOCAL synchronous_commit = off')
          return work(storesOn(postgresSql(tx)))
        }) as Promise<T>,
      options,
    )

  const pooled = storesOn(postgresSql(sql), true)
  const routing = replicas?.(changes) ?? null
  const inSnapshot = <T>(work: (view: Stores) => Promise<T>) =>
    sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => work(storesOn(postgresSql(tx)))) as Promise<T>

  const upkeep: Upkeep = {
    schemaVersion: async () => Number((await sql.unsafe('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations'))[0].v),
    integrity: () => checkIndexes(sql),
    copyTo: (path) => exportToSqlite(sql, path),
    loadCopy: (path, scratch, nul) => importFromSqlite(sql, path, scratch, nul),
  }

  return {
    instance,
    read: pooled,
    reads: routing ? storesOn(routing.routed(postgresSql(sql)), true) : pooled,
    transact,
    // Its one statement is a transaction of its own. Lazy durability is left to the tables: nonces are UNLOGGED (a
    // commit that wrote no WAL waits for no flush), and a statement elsewhere may as well commit fully.
    single: (work, options) => committing(() => work(pooled), options),
    snapshot: (work) =>
      routing
        ? routing.snapshot(
            (tx) => work(storesOn(postgresSql(tx))),
            () => inSnapshot(work),
          )
        : inSnapshot(work),
    changes,
    snapshots: postgresSnapshots(sql),
    cluster: postgresCluster(sql, feed),
    /**
     * A session-level advisory lock on a connection of its own: held until released, or until that connection dies
     * (PostgreSQL frees the lock with the session), which a statement on it every LEASE_WATCH_MS finds: `lost`.
     */
    async lease(name: string): Promise<Lease | null> {
      const connection = await leaseClientOf(name).reserve()
      try {
        const [{ got }] = await connection.unsafe('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [name])
        if (!got) {
          connection.release()
          return null
        }
      } catch (error) {
        connection.release()
        throw error
      }
      let released = false
      let markLost!: () => void
      const lost = new Promise<void>((resolve) => (markLost = resolve))
      const watch = setInterval(() => {
        connection.unsafe('SELECT 1').catch(() => {
          if (released) return
          released = true
          clearInterval(watch)
          held.delete(lease)
          connection.release()
          markLost()
        })
      }, LEASE_WATCH_MS)
      watch.unref()
      const lease: Lease = {
        lost,
        async release() {
          if (released) return
          released = true
          clearInterval(watch)
          held.delete(lease)
          try {
            await connection.unsafe('SELECT pg_advisory_unlock(hashtext($1))', [name])
          } finally {
            connection.release()
          }
        },
      }
      held.add(lease)
      return lease
    },
    upkeep,
    secret: () => claimedSecret(postgresSql(sql)),
    blockSpaces: postgresBlockSpaces(sql),
    replicas: routing?.replicas ?? null,
    /** Leases still held are released first: a reserved connection would keep the pool from closing. */
    async close() {
      await Promise.all([...held].map((lease) => lease.release().catch(() => {})))
      await feed?.close()
      await routing?.close()
      await Promise.all([...leaseClients.values()].map((client) => client.close().catch(() => {})))
      await sql.close()
    },
  }
}
