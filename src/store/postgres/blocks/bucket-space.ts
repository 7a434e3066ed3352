// The S3 block space: each block an object in an S3-compatible bucket (Bun's built-in S3 client), named by its
// multihash as blockstore-level spells keys, and indexed in table `block_index` of the records' PostgreSQL, which
// knows when each block was last written and so makes a collection race-free.
//
// A put stamps the index row first (an upsert), then always writes the object. A collection deletes index rows
// stamped before its cutoff, then their objects, in one transaction per batch: a put racing it waits on the row's lock
// until that commit, then stamps the row anew and writes its object after the delete, so the block stays. The bucket
// is the truth about what is there (has, get); the index about what was written when (list, collect).
import type { S3Client, SQL } from 'bun'
import type { InputPair, Pair } from 'interface-blockstore'
import { NotFoundError } from 'interface-store'
import type { CID } from 'multiformats/cid'
import { base32upper } from 'multiformats/bases/base32'
import type { BlockSpace, ListedBlock } from '../../../lib/block-space.ts'
import { joined, keyBytes, keyOf, listRows, plain, single, type Bytes } from './multihash-rows.ts'
import { reaching } from '../faults.ts'

type AbortOptions = { signal?: AbortSignal }
/** Blocks a collection removes per transaction. */
const COLLECT_BATCH = 64
/** Objects asked for, or deleted, at once. */
const IN_FLIGHT = 8

/** Taken while the index is made, so instances opening at once do not both create it. */
const CREATE_LOCK = 'trellis: block_index table'

const missing = (error: unknown) => (error as { code?: string })?.code === 'NoSuchKey'

/** Answers S3 asks to be retried ("please try again"), as its own SDKs do. */
const PASSING = new Set(['InternalError', 'SlowDown', 'ServiceUnavailable', 'RequestTimeout'])
const RETRIES = [50, 200, 800]

async function retried<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= RETRIES.length || !PASSING.has((error as { code?: string })?.code ?? '')) throw error
      await Bun.sleep(RETRIES[attempt]!)
    }
  }
}

/** `work` over `items`, at most IN_FLIGHT at once. */
async function inTurns<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += IN_FLIGHT) await Promise.all(items.slice(i, i + IN_FLIGHT).map(work))
}

class S3BlockSpace implements BlockSpace {
  constructor(
    private readonly sql: SQL,
    private readonly bucket: S3Client,
    private readonly prefix: string,
    private readonly now: () => number,
  ) {}

  private rows(strings: TemplateStringsArray, ...values: unknown[]): Promise<any[]> {
    return reaching(() => this.sql(strings, ...values))
  }

  /** The object of a block, each call retried where S3 asks for it. */
  private object(key: string) {
    const file = this.bucket.file(`${this.prefix}${key}`)
    return {
      bytes: () => retried(() => file.bytes()),
      write: (bytes: Uint8Array) => retried(() => file.write(bytes)),
      exists: () => retried(() => file.exists()),
      delete: () => retried(() => file.delete()),
    }
  }

  private async bytesOf(cid: CID): Promise<Uint8Array> {
    try {
      return await this.object(keyOf(cid)).bytes()
    } catch (error) {
      if (missing(error)) throw new NotFoundError(`block ${cid} is not stored`)
      throw error
    }
  }

  async put(cid: CID, value: Bytes, options?: AbortOptions): Promise<CID> {
    options?.signal?.throwIfAborted()
    const bytes = await joined(value)
    options?.signal?.throwIfAborted()
    // Lazily committed, as the blocks table's puts: the record naming the block commits fully after it.
    await this.rows`
      INSERT INTO block_index (mh, size, stored_at)
      SELECT ${cid.multihash.bytes}, ${bytes.byteLength}, ${this.now()}
      FROM (SELECT set_config('synchronous_commit', 'off', true)) AS lazily
      ON CONFLICT (mh) DO UPDATE SET stored_at = EXCLUDED.stored_at`
    await this.object(keyOf(cid)).write(bytes)
    return cid
  }

  async *putMany(source: Iterable<InputPair> | AsyncIterable<InputPair>, options?: AbortOptions): AsyncGenerator<CID> {
    for await (const { cid, bytes } of source) yield await this.put(cid, bytes, options)
  }

  async *get(cid: CID, options?: AbortOptions): AsyncGenerator<Uint8Array> {
    options?.signal?.throwIfAborted()
    yield await this.bytesOf(cid)
  }

  /** Up to IN_FLIGHT objects asked for ahead of the one handed out. */
  async *getMany(source: Iterable<CID> | AsyncIterable<CID>, options?: AbortOptions): AsyncGenerator<Pair> {
    const ahead: Array<{ cid: CID; bytes: Promise<Uint8Array> }> = []
    const handOut = (next: { cid: CID; bytes: Promise<Uint8Array> }): Pair => ({
      cid: next.cid,
      bytes: (async function* () {
        yield await next.bytes
      })(),
    })
    for await (const cid of source) {
      options?.signal?.throwIfAborted()
      const bytes = this.bytesOf(cid)
      bytes.catch(() => {}) // thrown when its turn comes
      ahead.push({ cid, bytes })
      if (ahead.length >= IN_FLIGHT) yield handOut(ahead.shift()!)
    }
    while (ahead.length > 0) yield handOut(ahead.shift()!)
  }

  async *getAll(options?: AbortOptions): AsyncGenerator<Pair> {
    for await (const listed of this.list()) {
      options?.signal?.throwIfAborted()
      const bytes = await this.bytesOf(listed.cid).catch((error: unknown) => {
        if (error instanceof NotFoundError) return null // indexed, its object never written (a put cut short)
        throw error
      })
      if (bytes) yield { cid: listed.cid, bytes: single(bytes) }
    }
  }

  async has(cid: CID, options?: AbortOptions): Promise<boolean> {
    options?.signal?.throwIfAborted()
    return this.object(keyOf(cid)).exists()
  }

  async delete(cid: CID, options?: AbortOptions): Promise<void> {
    options?.signal?.throwIfAborted()
    await this.rows`DELETE FROM block_index WHERE mh = ${cid.multihash.bytes}`
    await this.object(keyOf(cid)).delete()
  }

  async *deleteMany(source: Iterable<CID> | AsyncIterable<CID>, options?: AbortOptions): AsyncGenerator<CID> {
    for await (const cid of source) {
      await this.delete(cid, options)
      yield cid
    }
  }

  list(): AsyncGenerator<ListedBlock> {
    return listRows(this.sql, 'block_index')
  }

  keyOf(cid: CID): string {
    return keyOf(cid)
  }

  async removeUnreferenced(
    keys: string[],
    olderThan: number | null,
    options: { dryRun?: boolean } = {},
  ): Promise<{ removed: number; bytes: number }> {
    if (olderThan === null)
      throw new Error('the S3 index knows when each block was written: a collection must give the time before which it removes blocks')
    let removed = 0
    let bytes = 0
    for (let i = 0; i < keys.length; i += COLLECT_BATCH) {
      const mhs = this.sql.array(keys.slice(i, i + COLLECT_BATCH).map(keyBytes), 'BYTEA')
      const rows = options.dryRun
        ? await this.rows`SELECT mh, size FROM block_index WHERE mh = ANY(${mhs}) AND stored_at < ${olderThan}`
        : await reaching(() =>
            this.sql.begin(async (tx) => {
              const gone = await tx`DELETE FROM block_index WHERE mh = ANY(${mhs}) AND stored_at < ${olderThan} RETURNING mh, size`
              // Before the commit: a put of one of these waits on its row until then, and writes its object after.
              await inTurns(gone as Array<{ mh: Uint8Array }>, (row) => this.object(base32upper.encode(plain(row.mh))).delete())
              return gone
            }),
          )
      removed += rows.length
      for (const row of rows) bytes += row.size
    }
    return { removed, bytes }
  }

  /** The index rows ride on the records' commits, as the blocks table's do; an object is durable once written. */
  async sync(): Promise<void> {}

  /** The bucket gives the room back itself. */
  async compact(): Promise<void> {}
}

export interface S3Bucket {
  client: S3Client
  prefix: string
}

/**
 * The block space in `bucket` (objects under its prefix), indexed in table `block_index` of `sql`'s database (made at
 * the first open). The caller keeps `sql` and closes it.
 */
export async function openS3BlockSpace(sql: SQL, bucket: S3Bucket, options: { now?: () => number } = {}): Promise<BlockSpace> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${CREATE_LOCK}))`
    const [{ present }] = await tx`SELECT to_regclass('block_index') IS NOT NULL AS present`
    if (!present) await tx`CREATE TABLE block_index (mh bytea PRIMARY KEY, size integer NOT NULL, stored_at bigint NOT NULL)`
  })
  return new S3BlockSpace(sql, bucket.client, bucket.prefix, options.now ?? Date.now)
}
