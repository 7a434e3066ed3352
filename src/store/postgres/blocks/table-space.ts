// The PostgreSQL block space: every block a row of one table, shared by every instance on the database.
//
// PostgreSQL knows when a block was written, so no import needs to hold its blocks (store.ts, Hold): each put stamps
// the row with the time, and a collection removes only rows stamped before its cutoff, in the same statement that
// checks them. A put racing that DELETE waits for its row lock and then either inserts the block anew (the DELETE
// committed first) or has moved the stamp past the cutoff, so the DELETE, re-reading the row, leaves it.
//
// Times (stored_at, the cutoff) are milliseconds since the epoch, Date.now()'s unit, which is what the content store
// computes its cutoff in. Each instance stamps by its own clock: instances must agree on the time to well within the
// collection's grace.
import type { SQL } from 'bun'
import type { InputPair, Pair } from 'interface-blockstore'
import { NotFoundError } from 'interface-store'
import type { CID } from 'multiformats/cid'
import type { BlockSpace, ListedBlock } from '../../../lib/block-space.ts'
import { joined, keyBytes, keyOf, listRows, plain, rowCid, single, type Bytes } from './multihash-rows.ts'
import { reaching } from '../faults.ts'

type AbortOptions = { signal?: AbortSignal }
/** Rows getAll reads at a time: these carry the blocks, up to 256 KiB each. */
const GET_ALL_PAGE = 16

/** Taken while the table is made, so instances opening at once do not both create it. */
const CREATE_LOCK = 'trellis: blocks table'

class PostgresBlockSpace implements BlockSpace {
  constructor(
    private readonly sql: SQL,
    private readonly now: () => number,
  ) {}

  /** A statement, with a lost connection thrown as StoreUnavailable. */
  private rows(strings: TemplateStringsArray, ...values: unknown[]): Promise<any[]> {
    return reaching(() => this.sql(strings, ...values))
  }

  async put(cid: CID, value: Bytes, options?: AbortOptions): Promise<CID> {
    options?.signal?.throwIfAborted()
    const bytes = await joined(value)
    options?.signal?.throwIfAborted()
    // A block already there is the same bytes (same multihash): only its stamp moves, so a collection spares it.
    // Committed without waiting for its WAL flush (see sync()): the set_config is local to this statement's own
    // transaction.
    await this.rows`
      INSERT INTO blocks (mh, bytes, size, stored_at)
      SELECT ${cid.multihash.bytes}, ${bytes}, ${bytes.byteLength}, ${this.now()}
      FROM (SELECT set_config('synchronous_commit', 'off', true)) AS lazily
      ON CONFLICT (mh) DO UPDATE SET stored_at = EXCLUDED.stored_at`
    return cid
  }

  async *putMany(source: Iterable<InputPair> | AsyncIterable<InputPair>, options?: AbortOptions): AsyncGenerator<CID> {
    for await (const { cid, bytes } of source) yield await this.put(cid, bytes, options)
  }

  async *get(cid: CID, options?: AbortOptions): AsyncGenerator<Uint8Array> {
    options?.signal?.throwIfAborted()
    const [row] = await this.rows`SELECT bytes FROM blocks WHERE mh = ${cid.multihash.bytes}`
    if (!row) throw new NotFoundError(`block ${cid} is not stored`)
    yield plain(row.bytes)
  }

  async *getMany(source: Iterable<CID> | AsyncIterable<CID>, options?: AbortOptions): AsyncGenerator<Pair> {
    for await (const cid of source) {
      options?.signal?.throwIfAborted()
      yield { cid, bytes: this.get(cid, options) }
    }
  }

  async *getAll(options?: AbortOptions): AsyncGenerator<Pair> {
    let after = new Uint8Array(0) // every multihash sorts after the empty one
    while (true) {
      options?.signal?.throwIfAborted()
      const rows = await this.rows`SELECT mh, bytes FROM blocks WHERE mh > ${after} ORDER BY mh LIMIT ${GET_ALL_PAGE}`
      for (const row of rows) yield { cid: rowCid(plain(row.mh)), bytes: single(plain(row.bytes)) }
      if (rows.length < GET_ALL_PAGE) return
      after = rows.at(-1).mh
    }
  }

  async has(cid: CID, options?: AbortOptions): Promise<boolean> {
    options?.signal?.throwIfAborted()
    return (await this.rows`SELECT 1 FROM blocks WHERE mh = ${cid.multihash.bytes}`).length > 0
  }

  async delete(cid: CID, options?: AbortOptions): Promise<void> {
    options?.signal?.throwIfAborted()
    await this.rows`DELETE FROM blocks WHERE mh = ${cid.multihash.bytes}`
  }

  async *deleteMany(source: Iterable<CID> | AsyncIterable<CID>, options?: AbortOptions): AsyncGenerator<CID> {
    for await (const cid of source) {
      await this.delete(cid, options)
      yield cid
    }
  }

  list(): AsyncGenerator<ListedBlock> {
    return listRows(this.sql, 'blocks')
  }

  keyOf(cid: CID): string {
    return keyOf(cid)
  }

  /** `olderThan` in milliseconds since the epoch: rows stamped at or after it are spared. */
  async removeUnreferenced(
    keys: string[],
    olderThan: number | null,
    options: { dryRun?: boolean } = {},
  ): Promise<{ removed: number; bytes: number }> {
    if (olderThan === null)
      throw new Error('PostgreSQL knows when each block was written: a collection must give the time before which it removes blocks')
    if (keys.length === 0) return { removed: 0, bytes: 0 }
    const mhs = this.sql.array(keys.map(keyBytes), 'BYTEA')
    const rows = options.dryRun
      ? await this.rows`SELECT size FROM blocks WHERE mh = ANY(${mhs}) AND stored_at < ${olderThan}`
      : await this.rows`DELETE FROM blocks WHERE mh = ANY(${mhs}) AND stored_at < ${olderThan} RETURNING size`
    let bytes = 0
    for (const row of rows) bytes += row.size
    return { removed: rows.length, bytes }
  }

  /**
   * Nothing to wait for: a block is named only by a record committed afterwards in this same database, with full
   * durability, and PostgreSQL flushes its WAL in order, so that commit makes every put before it durable. A crash
   * before it loses only blocks nothing names yet. (Waiting here would cost each entry a second flush.)
   */
  async sync(): Promise<void> {}

  /** PostgreSQL's autovacuum makes the room of deleted rows reusable by itself. */
  async compact(): Promise<void> {}
}

/**
 * The block space in table `blocks` of `sql`'s database, made at the first open. `now` stamps puts (milliseconds
 * since the epoch; Date.now unless a test says otherwise). The caller keeps `sql` and closes it.
 */
export async function openPostgresBlockSpace(sql: SQL, options: { now?: () => number } = {}): Promise<BlockSpace> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${CREATE_LOCK}))`
    const [{ present }] = await tx`SELECT to_regclass('blocks') IS NOT NULL AS present`
    if (present) return
    await tx`CREATE TABLE blocks (mh bytea PRIMARY KEY, bytes bytea NOT NULL, size integer NOT NULL, stored_at bigint NOT NULL)`
    // Blocks are media or sealed bytes: PostgreSQL would try to compress each and keep it as it was.
    await tx`ALTER TABLE blocks ALTER COLUMN bytes SET STORAGE EXTERNAL`
  })
  return new PostgresBlockSpace(sql, options.now ?? Date.now)
}
