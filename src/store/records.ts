// The records port: what the domain knows of the database. An adapter per engine (store/sqlite/, later
// store/postgres/) builds the stores over its own connection and runs transactions its own way; the domain only
// awaits.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Sql } from './query.ts'
import type { BlockSpace } from '../lib/block-space.ts'
import type { S3Place } from '../config/values.ts'

/** The configured database cannot be used (unreachable, refused, missing): the process stops with exit 2. */
export class DatabaseUnavailable extends Error {
  readonly exitCode = 2
}

/** A restore found a market in the database it was to load: it loads nothing. */
export class OccupiedDatabase extends Error {
  constructor() {
    super('it holds a market already')
  }
}

/** A text value of a copy that holds NUL (U+0000), which PostgreSQL's text cannot: where it is, and the value. */
export interface NulText {
  table: string
  column: string
  /** The row's primary key, column by column. */
  key: Record<string, unknown>
  value: string
}

/**
 * What a load into PostgreSQL does with such a value: the text to store instead, `drop` (the row is not copied), or
 * null: it cannot be carried over, and the load is refused (UnloadableText) before anything is written.
 */
export type NulPolicy = (text: NulText) => string | 'drop' | null

/** A copy holds text PostgreSQL cannot store and the policy carries over no other way: every such value. */
export class UnloadableText extends Error {
  constructor(readonly values: NulText[]) {
    super(`${values.length} text value${values.length === 1 ? '' : 's'} with a NUL character (U+0000)`)
  }
}

/** How durable a transaction's commit must be: `lazy` may be lost by a power cut (nonces), never reordered. */
export type Durability = 'full' | 'lazy'

/**
 * How a write commits. `unkept`: it writes only tables no read is kept of (nonces): the version does not move, so
 * the read memo keeps what it holds (else every nonce asked for would empty it).
 */
export interface WriteOptions {
  durability?: Durability
  unkept?: boolean
}

/** Tells when what was read may be stale: the version moves once per commit that changed memoized records. */
export interface Changes {
  version(): number
  /** False while other writers' changes cannot be heard of (a lost listener): nothing read may be kept then. */
  live(): boolean
  onChange(listener: () => void): () => void
}

/** Changes heard of by this process alone (its own commits): `committed()` moves the version and tells the listeners. */
export function localChanges(): { changes: Changes; committed(): void } {
  let version = 0
  const listeners = new Set<() => void>()
  return {
    changes: {
      version: () => version,
      live: () => true,
      onChange(listener) {
        listeners.add(listener)
        return () => listeners.delete(listener)
      },
    },
    committed() {
      version++
      for (const listener of listeners) listener()
    },
  }
}

/** A read replica as /metrics and the log name it: its host and port (never user or password), its lag, whether it is read. */
export interface ReplicaStatus {
  replica: string
  /** Read now: reachable, a standby, and at most the bound behind the primary. */
  inUse: boolean
  /** How far behind the primary it is known to be at most (0: it replayed all the primary had at the last check). */
  lagS: number
}

/** The read replicas of the records (PostgreSQL's streaming standbys), and when one is dropped or taken back. */
export interface ReadReplicas {
  status(): ReplicaStatus[]
  onSwitch(listener: (status: ReplicaStatus, reason: string) => void): () => void
}

const primaryOnly = new AsyncLocalStorage<true>()

/**
 * Runs `work` (and everything it awaits) with every read on the primary: no replica serves `records.reads` or
 * `records.snapshot` within it. For a request that must see a write the replicas may not have replayed yet (a client
 * carrying the version of its own write). Free without replicas: nothing asks.
 */
export const onPrimary = <T>(work: () => T): T => primaryOnly.run(true, work)

/** Whether the current async context was put on the primary by `onPrimary`. */
export const readsFromPrimary = (): boolean => primaryOnly.getStore() === true

/** A named lock held by one process of many; `lost` settles if it is taken away. */
export interface Lease {
  readonly lost: Promise<void>
  release(): Promise<void>
}

/** What the leader builds for every instance: the leaderboards, the wallet ranks. */
export type SnapshotKind = 'boards' | 'ranks'
export interface Snapshot {
  generation: number
  generated_at: number
  body: string
}

/** Where the newest snapshot of each kind is kept: for the other instances, and for the next start. */
export interface SnapshotShelf {
  latest(kind: SnapshotKind): Promise<Snapshot | null>
  /** Puts `body` up as the newest of `kind` (the other instances hear of it when it is there); its generation. */
  publish(kind: SnapshotKind, generatedAt: number, body: string): Promise<number>
}

/** What instances sharing one database tell each other: a snapshot published (`kind:generation`), a payment decided (`payer:nonce`). */
export type Topic = 'snapshots' | 'payments' | 'takedowns' | 'sessions'

/** Tokens of a rate-limit window, shared by every instance: `taken` by this lease, `granted` by all so far. */
export interface RateLease {
  taken: number
  granted: number
  resetAt: number
  resetIn: number
}

/**
 * Where a version a request carries stands on this instance (read-your-writes, store/postgres/positions.ts):
 * `heard` (every commit up to it was heard: kept reads are fresh enough), `behind` (not heard within the wait: read
 * fresh), `ignored` (no such position was ever written: a forged version, or one of another database).
 */
export type Reached = 'heard' | 'behind' | 'ignored'

/** The mechanisms of many instances on one database (PostgreSQL). */
export interface Cluster {
  /**
   * Notices on `topic` from every instance, this one included; null when (re)subscribed, for whatever was sent
   * meanwhile went unheard. Heard only by records opened to listen (a server's).
   */
  hear(topic: Topic, listener: (payload: string | null) => void): () => void
  /** Whether instance `id` is heard from (its heartbeat within 1.5 s): false for one gone, and when nothing is heard. */
  alive(id: string): boolean
  /** Up to `want` more tokens of window `key` (`limit` per `windowS` seconds, timed by the database's clock). */
  leaseRate(key: string, want: number, limit: number, windowS: number): Promise<RateLease>
  /** Forgets the windows that ended; how many. */
  sweepRateWindows(): Promise<number>
  /**
   * The database's version now, taken after this instance's commits so far (its WAL position, `16/B374D848`), and
   * told to every instance: what a write's answer carries for the client's next request.
   */
  version(): Promise<string>
  /** Waits up to `withinMs` for this instance to hear every commit up to `version`; at once (not a promise) when it has. */
  reach(version: string, withinMs: number): Reached | Promise<Reached>
}

/**
 * Waits for lease `name` (trying every `pollMs`) and answers its release; throws after `timeoutMs`. For work that
 * must not run on two instances at once but may wait its turn (a relayer's nonce).
 */
export async function waitForLease(
  lease: (name: string) => Promise<Lease | null>,
  name: string,
  timeoutMs: number,
  pollMs = 10,
): Promise<() => Promise<void>> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const held = await lease(name)
    if (held) return () => held.release()
    if (performance.now() >= deadline) throw new Error(`lease ${name} is held elsewhere for over ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}

/** What an operator's commands ask of the database itself, beside its records. */
export interface Upkeep {
  /** The newest migration applied. */
  schemaVersion(): Promise<number>
  /** The engine's own check of its files: empty when sound, else what it found; `skipped` says why it could not look. */
  integrity(): Promise<{ problems: string[]; skipped?: string }>
  /** A consistent copy of the whole database, written to `path` (a new file): what a backup holds. */
  copyTo(path: string): Promise<void>
  /**
   * Every record of a copy (a backup's trellis.db, of this or an older schema) loaded into a database that holds
   * no market yet, in one transaction; `scratch` is a file it may use meanwhile. Text with NUL, which PostgreSQL
   * cannot hold, goes as `nul` says (each value it changed or dropped is answered); without `nul`, or where it answers
   * null, the load is refused (UnloadableText) before anything is written. Where a restore copies the file instead
   * (the embedded engine), it throws.
   */
  loadCopy(
    path: string,
    scratch: string,
    nul?: NulPolicy,
  ): Promise<{ rows: number; nul: Array<{ text: NulText; stored: string | 'drop' }> }>
}

/** Places for content blocks an engine hosts beside its records, for instances sharing them. */
export interface BlockSpaces {
  /** Blocks kept in the records' own database. */
  inDatabase(): Promise<BlockSpace>
  /** Blocks kept in an S3-compatible bucket, indexed in the records' database (which knows when each was written). */
  inBucket(place: S3Place): Promise<BlockSpace>
}

export interface Records<Stores> {
  /** This opening's id: what /health calls the instance, and how its writes are named to the others on PostgreSQL. */
  readonly instance: string
  /** Stores outside any transaction (each statement commits alone). Writes here touch only unmemoized tables. */
  readonly read: Stores
  /**
   * `read` for reads only, never a write: lists, pages, boards, statistics. With read replicas each statement may be
   * served by one, when it is known to hold every change this process has heard of (so the read memo never keeps an
   * older answer) and the context is not `onPrimary`; else, and on any failure there, by the primary.
   */
  readonly reads: Stores
  /**
   * Runs `work` in a transaction: all of it commits or none. `work` must await nothing but its `tx` (no network, no
   * files, no timers): a transaction holds every other reader of an embedded database until it ends.
   */
  transact<T>(work: (tx: Stores) => Promise<T>, options?: WriteOptions): Promise<T>
  /**
   * `transact` for work whose writes are one statement on PostgreSQL (the store methods it calls say so): there it
   * commits alone, without BEGIN and COMMIT around it (two round trips fewer); the embedded engine runs it as any
   * transaction. Reads after that statement (an explanation of why it changed nothing) see what others committed
   * meanwhile. `lazy` is what the work may get, not what it must: an engine may commit it fully.
   */
  single<T>(work: (tx: Stores) => Promise<T>, options?: WriteOptions): Promise<T>
  /**
   * One consistent view for many reads (leaderboards, checks, backups): no write lands in the middle of it. Read only;
   * a replica may serve it as it may `reads` (then `work` may run twice: again on the primary if the replica fails).
   */
  snapshot<T>(work: (view: Stores) => Promise<T>): Promise<T>
  readonly changes: Changes
  /** Null when another process holds it; the embedded engine has one process and always grants it. */
  lease(name: string): Promise<Lease | null>
  readonly snapshots: SnapshotShelf
  /** Null on the embedded engine: one process, which keeps all of this in memory. */
  readonly cluster: Cluster | null
  readonly upkeep: Upkeep
  /**
   * The server key for JWTs and page tokens (32 bytes), kept where the records are: beside an embedded database's
   * file, inside a shared one (every instance signs alike). Made on first asking, the same ever after.
   */
  secret(): Promise<Uint8Array>
  /** The places for content blocks this engine can host beside the records; null where it hosts none. */
  readonly blockSpaces: BlockSpaces | null
  /** Null without read replicas (always on the embedded engine). */
  readonly replicas: ReadReplicas | null
  close(): Promise<void>
}

/**
 * Builds a set of stores over one way of running statements: a transaction, or (`alone`) a pool where each statement
 * commits by itself, as `single`'s and `read`'s do.
 */
export type StoresOn<Stores> = (sql: Sql, alone?: boolean) => Stores
