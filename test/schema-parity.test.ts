// Both engines' migrations give one schema: SQLite (a fresh file) and PostgreSQL (a fresh database on a throwaway
// cluster) hold the same tables, columns (order, nullability, defaults, types by the port's rules), keys, indexes and
// triggers, after all the steps and after each one. And migrating PostgreSQL is safe with many instances starting at once, and
// refuses a database a newer Trellis migrated.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres, type Postgres } from '../dev/postgres.ts'
import { MIGRATIONS, POSTGRES_MIGRATIONS, SCHEMA_VERSION, SchemaMismatch } from '../src/store/migrations/index.ts'
import { openDb } from '../src/store/sqlite/database.ts'
import { migratePostgres, requireCurrentPostgres } from '../src/store/postgres/migrate.ts'

// The port's type rules: money is NUMERIC(78,0), flags smallint 0/1, every other SQLite INTEGER bigint.
const MONEY = new Set([
  'feeds.total_revenue',
  'entries.price',
  'entries.total_revenue',
  'payments.amount',
  'transactions.amount',
  'feed_days.revenue',
  'buyer_days.spent',
  'address_totals.revenue',
  'address_totals.spent',
  'ledger_totals.revenue',
  'pass_offers.price',
  'seller_buyer_days.revenue',
  'entry_days.revenue',
])
const FLAGS = new Set([
  'categories.is_active',
  'feeds.is_active',
  'entries.is_free',
  'entries.is_active',
  'entries.deactivated_with_feed',
  'access_links.is_active',
  'feeds.taken_down',
  'entries.taken_down',
  'takedowns.was_active',
  'webhook_endpoints.is_active',
  'pass_offers.is_active',
])
const PG_TYPE_OF_SQLITE: Record<string, (column: string) => string> = {
  TEXT: () => 'text',
  BLOB: () => 'bytea',
  INTEGER: (column) => (MONEY.has(column) ? 'numeric(78,0)' : FLAGS.has(column) ? 'smallint' : 'bigint'),
}

interface Column {
  name: string
  type: string
  notNull: boolean
  default: string | null
}
interface Index {
  name: string
  table: string
  columns: string[]
  unique: boolean
  where: string | null
}
interface Schema {
  columns: Record<string, Column[]>
  primaryKeys: Record<string, string[]>
  uniques: Record<string, string[][]>
  foreignKeys: Record<string, string[]>
  indexes: Index[]
  triggers: string[]
  /** PostgreSQL: the tables whose writes notify the change feed. */
  changeFeed?: string[]
  /** PostgreSQL: what only instances sharing one database need (012): its tables (with their indexes) and triggers. */
  cluster?: { tables: string[]; indexes: string[]; triggers: string[] }
  /** Each engine's own full-text index of search_docs (024), kept apart from what both must share (see FULL_TEXT). */
  fullText?: string[]
}

/**
 * The full-text index of search_docs (024) is each engine's by nature: on SQLite an FTS5 virtual table (and the shadow
 * tables FTS5 keeps its index in) filled by three triggers on search_docs; on PostgreSQL a generated tsvector column
 * of search_docs and its GIN index. Everything else of 024 (search_docs itself, its keys) is held to parity.
 */
const FULL_TEXT = {
  sqlite: [
    'table search_fts (fts5)',
    'trigger search_fts_delete AFTER DELETE search_docs',
    'trigger search_fts_insert AFTER INSERT search_docs',
    'trigger search_fts_update AFTER UPDATE search_docs',
  ],
  postgres: ['column search_docs.document tsvector', 'index search_docs_document gin (document)'],
}

/** Tables of PostgreSQL's 012 with no SQLite twin (the embedded engine keeps these in files and memory). */
const CLUSTER_TABLES = ['rate_windows', 'snapshots']

/** A condition as either engine prints it, without casts, brackets, spacing or case: `status='pending'`. */
const condition = (text: string | null) =>
  text
    ?.replace(/::[a-z ]+/g, '')
    .replace(/[()\s]/g, '')
    .toLowerCase() ?? null
/** A default as either engine prints it: `'[]'::text` is `'[]'`. */
const defaultValue = (text: string | null) => text?.replace(/::[a-z ]+(\(\d+(,\d+)?\))?$/, '') ?? null
/** `feeds_activity AFTER INSERT ON feeds` from either engine's CREATE TRIGGER text. */
const triggerOf = (name: string, sql: string) =>
  `${name} ${/\b(AFTER|BEFORE) (INSERT OR UPDATE|INSERT|DELETE|UPDATE OF \w+|UPDATE) ON (?:public\.)?(\w+)/i.exec(sql)!.slice(1).join(' ')}`
const sorted = <T>(xs: T[]) => [...xs].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))

function sqliteSchema(db: Database): Schema {
  // Plain tables: FTS5's virtual table and its shadow tables are the engine's own (FULL_TEXT), listed below.
  const tables = db
    .query<{ name: string }, []>(
      "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    .map((t) => t.name)
  const schema: Schema = { columns: {}, primaryKeys: {}, uniques: {}, foreignKeys: {}, indexes: [], triggers: [] }
  for (const table of tables) {
    const info = db
      .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, [string]>(
        'SELECT * FROM pragma_table_info(?)',
      )
      .all(table)
    // A PRIMARY KEY column of a rowid table may hold NULL in SQLite (an old quirk); no statement of ours writes one.
    schema.columns[table] = info.map((c) => ({
      name: c.name,
      type: PG_TYPE_OF_SQLITE[c.type]!(`${table}.${c.name}`),
      notNull: c.notnull === 1 || c.pk > 0,
      default: c.dflt_value,
    }))
    schema.primaryKeys[table] = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name)
    const indexList = db
      .query<{ name: string; unique: number; origin: string; partial: number }, [string]>('SELECT * FROM pragma_index_list(?)')
      .all(table)
    const columnsOf = (index: string) =>
      db
        .query<{ name: string }, [string]>('SELECT name FROM pragma_index_info(?) ORDER BY seqno')
        .all(index)
        .map((c) => c.name)
    schema.uniques[table] = sorted(indexList.filter((i) => i.origin === 'u').map((i) => columnsOf(i.name)))
    schema.foreignKeys[table] = db
      .query<{ from: string; table: string; to: string }, [string]>('SELECT * FROM pragma_foreign_key_list(?)')
      .all(table)
      .map((k) => `${k.from} → ${k.table}.${k.to}`)
      .sort()
    for (const i of indexList.filter((i) => i.origin === 'c')) {
      const sql = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(i.name)!.sql
      schema.indexes.push({
        name: i.name,
        table,
        columns: columnsOf(i.name),
        unique: i.unique === 1,
        where: i.partial ? condition(/\bWHERE\b(.*)$/is.exec(sql)![1]!) : null,
      })
    }
  }
  schema.indexes = sorted(schema.indexes)
  const triggers = db
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    .all()
    .map((t) => triggerOf(t.name, t.sql))
  const indexing = (trigger: string) => trigger.startsWith('search_fts_')
  schema.triggers = triggers.filter((t) => !indexing(t)).sort()
  const virtual = db
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'")
    .all()
    .map((t) => `table ${t.name} (${/\bUSING\s+(\w+)/i.exec(t.sql)![1]!.toLowerCase()})`)
  schema.fullText = [...virtual, ...triggers.filter(indexing).map((t) => `trigger ${t}`)].sort()
  return schema
}

async function postgresSchema(sql: SQL): Promise<Schema> {
  const schema: Schema = { columns: {}, primaryKeys: {}, uniques: {}, foreignKeys: {}, indexes: [], triggers: [] }
  const columns = await sql`SELECT table_name, column_name, data_type, numeric_precision, numeric_scale, is_nullable, column_default
    FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`
  for (const c of columns) {
    const type = c.data_type === 'numeric' ? `numeric(${c.numeric_precision},${c.numeric_scale})` : c.data_type
    ;(schema.columns[c.table_name] ??= []).push({
      name: c.column_name,
      type,
      notNull: c.is_nullable === 'NO',
      default: defaultValue(c.column_default),
    })
  }
  // Keys: constraints, with their columns in key order.
  const constraints = await sql`SELECT t.relname AS table, c.contype AS kind, c.confrelid::regclass::text AS target,
      ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k (n, i)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
      ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k (n, i)
        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS target_columns
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace s ON s.oid = t.relnamespace
    WHERE s.nspname = 'public' AND c.contype IN ('p', 'u', 'f')`
  for (const table of Object.keys(schema.columns)) {
    const of = (kind: string) => constraints.filter((c: { table: string; kind: string }) => c.table === table && c.kind === kind)
    schema.primaryKeys[table] = of('p')[0]?.columns ?? []
    schema.uniques[table] = sorted(of('u').map((c: { columns: string[] }) => c.columns))
    schema.foreignKeys[table] = of('f')
      .map(
        (c: { columns: string[]; target: string; target_columns: string[] }) =>
          `${c.columns.join()} → ${c.target}.${c.target_columns.join()}`,
      )
      .sort()
  }
  // Indexes made by CREATE INDEX: those no key constraint owns (SQLite's sqlite_autoindex_* are the others).
  const indexes =
    await sql`SELECT i.relname AS name, t.relname AS table, x.indisunique AS unique, pg_get_expr(x.indpred, x.indrelid) AS where,
      ARRAY(SELECT a.attname FROM unnest(x.indkey::int2[]) WITH ORDINALITY k (n, i)
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.i) AS columns
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace s ON s.oid = t.relnamespace
    WHERE s.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`
  schema.indexes = sorted(
    indexes.map((i: Index) => ({ name: i.name, table: i.table, columns: i.columns, unique: i.unique, where: condition(i.where) })),
  )
  // The change feed's statement triggers (PostgreSQL's 011) have no SQLite twin: kept apart, as their tables.
  const triggers =
    await sql`SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS sql, p.proname AS function, c.relname AS table FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace s ON s.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
    WHERE s.nspname = 'public' AND NOT t.tgisinternal`
  const feeding = (t: { function: string }) => t.function === 'trellis_changed'
  const announcing = (t: { function: string }) =>
    ['trellis_payment_decided', 'trellis_takedowns_changed', 'trellis_session_ended'].includes(t.function)
  schema.triggers = triggers
    .filter((t: { function: string }) => !feeding(t) && !announcing(t))
    .map((t: { name: string; sql: string }) => triggerOf(t.name, t.sql))
    .sort()
  schema.changeFeed = triggers
    .filter(feeding)
    .map((t: { table: string }) => t.table)
    .sort()
  // The cluster's own tables, kept apart as the change feed's triggers are.
  const own = CLUSTER_TABLES.filter((table) => table in schema.columns)
  schema.cluster = {
    tables: own,
    indexes: schema.indexes
      .filter((i) => own.includes(i.table))
      .map((i) => i.name)
      .sort(),
    triggers: triggers
      .filter(announcing)
      .map((t: { name: string; sql: string }) => triggerOf(t.name, t.sql))
      .sort(),
  }
  for (const table of own) for (const part of [schema.columns, schema.primaryKeys, schema.uniques, schema.foreignKeys]) delete part[table]
  schema.indexes = schema.indexes.filter((i) => !own.includes(i.table))
  // The full-text index's column and its index (FULL_TEXT), kept apart.
  const documents = await sql`SELECT table_name || '.' || column_name AS name, data_type AS type FROM information_schema.columns
    WHERE table_schema = 'public' AND data_type = 'tsvector'`
  const searchIndexes = await sql`SELECT i.relname AS name, am.amname AS method, pg_get_indexdef(i.oid) AS sql FROM pg_class i
    JOIN pg_am am ON am.oid = i.relam JOIN pg_namespace s ON s.oid = i.relnamespace
    WHERE s.nspname = 'public' AND i.relkind = 'i' AND am.amname <> 'btree'`
  schema.fullText = [
    ...documents.map((c: { name: string; type: string }) => `column ${c.name} ${c.type}`),
    ...searchIndexes.map((i: { name: string; method: string; sql: string }) => `index ${i.name} ${i.method} ${/\(.*\)$/.exec(i.sql)![0]}`),
  ].sort()
  for (const column of documents) {
    const [table, name] = column.name.split('.')
    schema.columns[table] = schema.columns[table]!.filter((c) => c.name !== name)
  }
  schema.indexes = schema.indexes.filter((i) => !searchIndexes.some((s: { name: string }) => s.name === i.name))
  return schema
}

let postgres: Postgres
let admin: SQL
const clients: SQL[] = []
let dir: string

/** A fresh, empty database on the cluster, and a client of it. */
async function freshDatabase(name: string, max = 2): Promise<SQL> {
  await admin.unsafe(`CREATE DATABASE ${name}`)
  const client = new SQL(postgres.urlOf(name), { max })
  clients.push(client)
  return client
}

beforeAll(async () => {
  postgres = await startPostgres()
  admin = new SQL(postgres.adminUrl, { max: 1 })
  dir = mkdtempSync(join(tmpdir(), 'trellis-parity-'))
})
afterAll(async () => {
  for (const client of clients) await client.close()
  await admin?.close()
  await postgres?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('both engines list the same migrations: versions and names', () => {
  expect(POSTGRES_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]))
  expect(POSTGRES_MIGRATIONS.at(-1)!.version).toBe(SCHEMA_VERSION)
})

describe('the schema after the migrations', () => {
  let sqlite: Schema
  let pg: Schema
  let sql: SQL

  beforeAll(async () => {
    const db = openDb(join(dir, 'trellis.db'))
    sqlite = sqliteSchema(db)
    db.close()
    sql = await freshDatabase('parity')
    expect(await migratePostgres(sql, 'parity')).toBe(POSTGRES_MIGRATIONS.length)
    pg = await postgresSchema(sql)
  })

  test('the same tables, and in each the same columns in the same order, nullability, defaults and types', () => {
    expect(Object.keys(pg.columns).sort()).toEqual(Object.keys(sqlite.columns).sort())
    for (const table of Object.keys(sqlite.columns)) expect(pg.columns[table], table).toEqual(sqlite.columns[table])
  })

  test('the same primary keys, unique constraints and foreign keys', () => {
    expect(pg.primaryKeys).toEqual(sqlite.primaryKeys)
    expect(pg.uniques).toEqual(sqlite.uniques)
    expect(pg.foreignKeys).toEqual(sqlite.foreignKeys)
  })

  test('the same indexes by name: columns, uniqueness and partial conditions', () => {
    expect(pg.indexes.map((i) => i.name)).toEqual(sqlite.indexes.map((i) => i.name))
    expect(pg.indexes).toEqual(sqlite.indexes)
    expect(pg.indexes.find((i) => i.name === 'payments_one_pending_purchase')).toEqual({
      name: 'payments_one_pending_purchase',
      table: 'payments',
      columns: ['payer_lc', 'entry_id', 'pending_slot'],
      unique: true,
      where: "status='pending'",
    })
  })

  test('every text column compares by bytes (collation "C"), as SQLite\'s BINARY does, whatever the database\'s default', async () => {
    const columns = await sql`SELECT table_name || '.' || column_name AS name, collation_name AS collation FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type = 'text' ORDER BY 1`
    expect(columns.length).toBeGreaterThan(70)
    expect(columns.filter((c: { collation: string | null }) => c.collation !== 'C')).toEqual([])
  })

  test("each engine's own full-text index of search_docs: FTS5 and its triggers, a tsvector column with a GIN index", () => {
    expect(sqlite.fullText).toEqual(FULL_TEXT.sqlite)
    expect(pg.fullText).toEqual(FULL_TEXT.postgres)
  })

  test('the same triggers, on the same tables and events', () => {
    expect(pg.triggers).toEqual(sqlite.triggers)
    expect(pg.triggers.length).toBe(17)
  })

  test("PostgreSQL's change feed: a write to any table but those no read is kept of notifies the other instances", () => {
    const unkept = [
      'challenge_days',
      'ended_sessions',
      'meta',
      'nonces',
      'payments',
      'schema_migrations',
      'siwx_spent',
      'webhook_deliveries',
      'webhook_endpoints',
      'websub_deliveries',
      'websub_intents',
      'websub_subscriptions',
    ]
    expect(pg.changeFeed).toEqual(
      Object.keys(sqlite.columns)
        .filter((table) => !unkept.includes(table))
        .sort(),
    )
  })

  test(
    "PostgreSQL's cluster parts: snapshots, UNLOGGED rate windows leased by trellis_lease, the " +
      'notices of a decided payment, of takedowns and of sign-outs',
    async () => {
      expect(pg.cluster).toEqual({
        tables: ['rate_windows', 'snapshots'],
        indexes: ['rate_windows_reset'],
        triggers: [
          'ended_sessions_notice AFTER INSERT ended_sessions',
          'payments_decided AFTER UPDATE OF status payments',
          'takedowns_notice AFTER INSERT OR UPDATE takedowns',
        ],
      })
      const [persistence] = await sql`SELECT relpersistence FROM pg_class WHERE relname = 'rate_windows'`
      expect(persistence.relpersistence).toBe('u')
      // Ten tokens of a window of 5: 5, then none, then none again; all of one window.
      const leases = []
      for (const want of [3, 3, 10]) leases.push((await sql`SELECT * FROM trellis_lease('parity', ${want}, 5, 60)`)[0])
      expect(leases.map((l: { taken: number; granted: number }) => [l.taken, l.granted])).toEqual([
        [3, 3],
        [2, 5],
        [0, 5],
      ])
      expect(new Set(leases.map((l: { reset_at: number }) => l.reset_at)).size).toBe(1)
      expect(leases[2].reset_in).toBeGreaterThan(58)
      expect(leases[2].reset_in).toBeLessThanOrEqual(60)
    },
  )
})

test('after each step, too: every step is a port of its namesake', async () => {
  const db = new Database(':memory:')
  const sql = await freshDatabase('steps')
  for (const [i, m] of MIGRATIONS.entries()) {
    db.exec(m.sql)
    await sql.begin((tx) => tx.unsafe(POSTGRES_MIGRATIONS[i]!.sql).simple())
    const { changeFeed, cluster, fullText, ...shared } = await postgresSchema(sql)
    const { fullText: ownFullText, ...lite } = sqliteSchema(db)
    expect(shared, m.name).toEqual(lite)
    expect([fullText!.length > 0, ownFullText!.length > 0], m.name).toEqual([m.version >= 24, m.version >= 24])
    expect(changeFeed!.length > 0, m.name).toBe(m.version >= 11)
    expect(cluster!.tables.length > 0, m.name).toBe(m.version >= 12)
  }
  db.close()
})

describe('migrating PostgreSQL', () => {
  test('six instances starting at once on one empty database: it is migrated once, and none fails', async () => {
    await freshDatabase('race')
    const instances = Array.from({ length: 6 }, () => {
      const client = new SQL(postgres.urlOf('race'), { max: 2 })
      clients.push(client)
      return client
    })
    const applied = await Promise.all(instances.map((sql) => migratePostgres(sql, 'race')))
    expect(applied.reduce((a, b) => a + b, 0)).toBe(POSTGRES_MIGRATIONS.length) // every step applied by exactly one of them
    const rows = await instances[0]!`SELECT version, name FROM schema_migrations ORDER BY version`
    expect(rows.map((r: { version: string; name: string }) => [Number(r.version), r.name])).toEqual(
      POSTGRES_MIGRATIONS.map((m) => [m.version, m.name]),
    )
    // Nothing is left locked: another start takes the lock and finds nothing to do.
    expect(await migratePostgres(instances[1]!, 'race')).toBe(0)
    await requireCurrentPostgres(instances[2]!, 'race')
  })

  test(
    'a database a newer Trellis migrated is refused, naming its version; so is one not yet ' + 'migrated, where it must be current',
    async () => {
      const sql = await freshDatabase('future')
      const empty = await requireCurrentPostgres(sql, 'postgres://host/future').catch((error: Error) => error)
      expect(empty).toBeInstanceOf(SchemaMismatch)
      expect((empty as Error).message).toBe('this data directory has an older schema; start the server once to migrate it')

      await migratePostgres(sql, 'postgres://host/future')
      const future = SCHEMA_VERSION + 1
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${future}, ${`0${future}-future`}, 0)`
      for (const attempt of [migratePostgres, requireCurrentPostgres]) {
        const refused = await attempt(sql, 'postgres://host/future').then(
          () => null,
          (error: Error) => error,
        )
        expect(refused).toBeInstanceOf(SchemaMismatch)
        expect(refused!.message).toStartWith(
          `the database postgres://host/future has schema version ${future}, newer than this Trellis ` +
            `knows (${SCHEMA_VERSION}): it was written by a newer Trellis`,
        )
      }
      // The refusal released the migration lock (asked on a session of its own: a session's own locks are granted again).
      const other = new SQL(postgres.urlOf('future'), { max: 1 })
      clients.push(other)
      const [{ got }] = await other`SELECT pg_try_advisory_lock(hashtext('trellis:migrate')) AS got`
      expect(got).toBe(true)
    },
  )
})
