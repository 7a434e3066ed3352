// A PostgreSQL database's records to and from the backup format (a SQLite file with the embedded schema): what
// `trellis backup` writes of a database in PostgreSQL, and what `trellis restore` and `migrate-to-postgres` load
// into one. Moving rows is copy-rows.ts's; this file holds what each side needs around it: one snapshot to
// read from, the receiving side's triggers off, one transaction to load in.
import { Database } from 'bun:sqlite'
import { copyFileSync, rmSync } from 'node:fs'
import type { SQL } from 'bun'
import { copyTable, tablesOf, type TableShape } from './copy-rows.ts'
import { OccupiedDatabase, UnloadableText, type NulPolicy, type NulText } from '../records.ts'
import { openDb } from '../sqlite/database.ts'
import { plainSqlite, rebuildSearchIndex } from '../sqlite/statements.ts'
import { postgresSql } from './sql.ts'

/** The key is not a record: a backup keeps it in secret.key, as the embedded engine does. */
const notTheSecret = (table: string) => (table === 'meta' ? (row: Record<string, unknown>) => row.key !== 'secret' : undefined)

/** Every record of the database, as of one moment however many writers commit meanwhile, into a new SQLite file. */
export async function exportToSqlite(sql: SQL, path: string): Promise<void> {
  const db = openDb(path)
  try {
    const tables = tablesOf(db)
    const triggers = db.query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all()
    db.exec('BEGIN')
    for (const { name } of triggers) db.exec(`DROP TRIGGER "${name}"`)
    for (const { name } of tables) db.exec(`DELETE FROM "${name}"`) // what the migrations seeded
    await sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
      for (const table of tables) await copyTable(postgresSql(tx), plainSqlite(db), table, { keep: notTheSecret(table.name) })
    })
    for (const trigger of triggers) db.exec(trigger.sql)
    rebuildSearchIndex(db) // the documents came without their index (the triggers that keep it were off)
    db.exec('COMMIT')
    db.exec('PRAGMA journal_mode = DELETE') // one file, as a backup holds it
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    db.close()
    rmSync(path, { force: true })
    throw error
  }
  db.close()
}

type Row = Record<string, unknown>

/** A row's primary key as one string (a key may be a bigint: this file reads SQLite with safeIntegers). */
const keyOf = (table: TableShape, row: Row) =>
  JSON.stringify(
    table.key.map((column) => row[column]),
    (_, value) => (typeof value === 'bigint' ? `${value}n` : value),
  )

/**
 * Every text value of the copy that holds NUL (U+0000), which PostgreSQL's text cannot: SQLite's text can, and an
 * older Trellis stored what clients sent. One pass over each table that has text columns.
 */
function nulTexts(db: Database, tables: TableShape[]): NulText[] {
  const found: NulText[] = []
  for (const table of tables) {
    const text = db
      .query<{ name: string; type: string }, [string]>('SELECT name, type FROM pragma_table_info(?) ORDER BY cid')
      .all(table.name)
      .filter((c) => c.type.toUpperCase() === 'TEXT')
      .map((c) => c.name)
    if (text.length === 0) continue
    const columns = [...new Set([...table.key, ...text])].map((c) => `"${c}"`).join(', ')
    // By bytes: a cast to BLOB keeps them all (SQLite's text functions may stop at a NUL).
    const holds = text.map((c) => `instr(CAST("${c}" AS BLOB), x'00') > 0`).join(' OR ')
    for (const row of db
      .query<Row, []>(`SELECT ${columns} FROM "${table.name}" WHERE ${holds} ORDER BY ${table.key.map((c) => `"${c}"`).join(', ')}`)
      .all()) {
      for (const column of text) {
        const value = row[column]
        if (typeof value === 'string' && value.includes('\u0000'))
          found.push({ table: table.name, column, key: Object.fromEntries(table.key.map((c) => [c, row[c]])), value })
      }
    }
  }
  return found
}

/**
 * A backup's records into this database, which must hold no market yet (a fresh one, or one a server only started
 * on). The copy is brought to this binary's schema first, on a scratch file beside it, as a restore into a data
 * directory would be by its first start. Text with NUL goes as `nul` says; a value it cannot carry (or any, without
 * it) refuses the whole load before anything is written.
 */
export async function importFromSqlite(
  sql: SQL,
  path: string,
  scratch: string,
  nul?: NulPolicy,
): Promise<{ rows: number; nul: Array<{ text: NulText; stored: string | 'drop' }> }> {
  copyFileSync(path, scratch)
  try {
    openDb(scratch).close() // migrated
    const db = new Database(scratch, { readonly: true, safeIntegers: true })
    try {
      const tables = tablesOf(db)
      const decided = nulTexts(db, tables).map((text) => ({ text, stored: nul ? nul(text) : null }))
      const refused = decided.filter((d) => d.stored === null).map((d) => d.text)
      if (refused.length > 0) throw new UnloadableText(refused)
      const carried = decided as Array<{ text: NulText; stored: string | 'drop' }>
      // Per table, per row key: whether the row is left out, and the values it is stored with instead.
      const changes = new Map<string, Map<string, { drop: boolean; set: Row }>>()
      for (const { text, stored } of carried) {
        const table = tables.find((t) => t.name === text.table)!
        const byKey = changes.get(table.name) ?? changes.set(table.name, new Map()).get(table.name)!
        const key = keyOf(table, text.key)
        const change = byKey.get(key) ?? byKey.set(key, { drop: false, set: {} }).get(key)!
        if (stored === 'drop') change.drop = true
        else change.set[text.column] = stored
      }
      const adjusted = (table: TableShape) => {
        const byKey = changes.get(table.name)
        if (!byKey) return {}
        return {
          keep: (row: Row) => !byKey.get(keyOf(table, row))?.drop,
          change: (row: Row) => ({ ...row, ...byKey.get(keyOf(table, row))?.set }),
        }
      }
      const rows = await sql.begin(async (tx) => {
        // ALTER TABLE locks each table against another restore's: the second looks once the first has committed.
        for (const { name } of tables) await tx.unsafe(`ALTER TABLE "${name}" DISABLE TRIGGER USER`)
        const [{ occupied }] = await tx.unsafe(
          `SELECT EXISTS (SELECT 1 FROM wallets) OR EXISTS (SELECT 1 FROM feeds)
            OR EXISTS (SELECT 1 FROM transactions) OR EXISTS (SELECT 1 FROM payments) AS occupied`,
        )
        if (occupied) throw new OccupiedDatabase()
        for (const { name } of [...tables].reverse()) await tx.unsafe(`DELETE FROM "${name}"`)
        let rows = 0
        for (const table of tables) rows += await copyTable(plainSqlite(db), postgresSql(tx), table, adjusted(table))
        for (const { name } of tables) await tx.unsafe(`ALTER TABLE "${name}" ENABLE TRIGGER USER`)
        return rows
      })
      // The planner's statistics of a table just filled are those of an empty one until autovacuum comes by.
      await sql.unsafe(`ANALYZE ${tables.map(({ name }) => `"${name}"`).join(', ')}`)
      return { rows, nul: carried }
    } finally {
      db.close()
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${scratch}${suffix}`, { force: true })
  }
}
