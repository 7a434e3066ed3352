// What instances sharing one PostgreSQL database share beside the records (migration 012): the snapshots the leader
// publishes, the rate-limit windows they lease tokens of, the notices the change feed's connection hears, and the
// versions of read-your-writes (positions.ts).
import type { SQL } from 'bun'
import type { Cluster, Snapshot, SnapshotKind, SnapshotShelf } from '../records.ts'
import type { ChangeFeed } from './change-feed.ts'
import { feedPositions } from './positions.ts'

const SNAPSHOTS_CHANNEL = 'trellis_snapshots'

/** Snapshots in table `snapshots`; a publication notifies `kind:generation` in the statement that writes it (at commit). */
export function postgresSnapshots(sql: SQL): SnapshotShelf {
  return {
    async latest(kind: SnapshotKind): Promise<Snapshot | null> {
      const [row] = await sql.unsafe('SELECT generation, generated_at, body FROM snapshots WHERE kind = $1', [kind])
      return row ? { generation: Number(row.generation), generated_at: Number(row.generated_at), body: row.body } : null
    },
    async publish(kind: SnapshotKind, generatedAt: number, body: string): Promise<number> {
      const [row] = await sql.unsafe(
        `WITH kept AS (
          INSERT INTO snapshots AS s (kind, generation, generated_at, body) VALUES ($1, 1, $2, $3)
          ON CONFLICT (kind) DO UPDATE SET generation = s.generation + 1, generated_at = excluded.generated_at, body = excluded.body
          RETURNING generation)
        SELECT generation, pg_notify($4, $1 || ':' || generation) FROM kept`,
        [kind, generatedAt, body, SNAPSHOTS_CHANNEL],
      )
      return Number(row.generation)
    },
  }
}

/** Without a feed (records not opened to listen) nothing is heard; leases work all the same. */
export function postgresCluster(sql: SQL, feed: ChangeFeed | null): Cluster {
  const positions = feedPositions(sql, feed)
  return {
    hear: (topic, listener) => feed?.hear(topic, listener) ?? (() => {}),
    alive: (id) => feed?.alive(id) ?? false,
    async leaseRate(key, want, limit, windowS) {
      const [row] = await sql.unsafe('SELECT taken, granted, reset_at, reset_in FROM trellis_lease($1, $2, $3, $4)', [
        key,
        want,
        limit,
        windowS,
      ])
      return { taken: Number(row.taken), granted: Number(row.granted), resetAt: Number(row.reset_at), resetIn: Number(row.reset_in) }
    },
    sweepRateWindows: async () =>
      (await sql.unsafe('DELETE FROM rate_windows WHERE reset_at < extract(epoch FROM clock_timestamp())')).count,
    version: positions.version,
    reach: positions.reach,
  }
}
