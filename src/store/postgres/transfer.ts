// A PostgreSQL database's records to and from the backup format (a SQLite file with the embedded schema): what
// `trellis backup` writes of a database in PostgreSQL, and what `trellis restore` and `migrate-to-postgres` load
// into one. Moving rows is store/copy-rows.ts's; this file holds what each side needs around it: one snapshot to
// read from, the receiving side's triggers off, one transaction to load in.
import { Database } from 'bun:sqlite'
import { copyFileSync, rmSync } from 'node:fs'
import type { SQL } from 'bun'
import { copyTable, tablesOf } from '../copy-rows.ts'
import { OccupiedDatabase } from '../records.ts'
import { render, type Query, type Sql } from '../query.ts'
import { openDb } from '../sqlite/database.ts'
import { postgresSql } from './sql.ts'

/** Statements on a SQLite connection of this file's own (no other user: no gate, no group commit). */
function plainSqlite(db: Database): Sql {
  const prepared = (query: Query) => {
    const { text, values } = render(query, '?')
    return { statement: db.query(text), values: values as never[] }
  }
  return {
    all: async <T>(query: Query) => { const { statement, values } = prepared(query); return statement.all(...values) as T[] },
    get: async <T>(query: Query) => { const { statement, values } = prepared(query); return (statement.get(...values) ?? undefined) as T | undefined },
    run: async (query: Query) => { const { statement, values } = prepared(query); return statement.run(...values).changes },
  }
}

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

/**
 * A backup's records into this database, which must hold no market yet (a fresh one, or one a server only started
 * on). The copy is brought to this binary's schema first, on a scratch file beside it, as a restore into a data
 * directory would be by its first start.
 */
export async function importFromSqlite(sql: SQL, path: string, scratch: string): Promise<{ rows: number }> {
  copyFileSync(path, scratch)
  try {
    openDb(scratch).close() // migrated
    const db = new Database(scratch, { readonly: true, safeIntegers: true })
    try {
      const tables = tablesOf(db)
      return await sql.begin(async (tx) => {
        // ALTER TABLE locks each table against another restore's: the second looks once the first has committed.
        for (const { name } of tables) await tx.unsafe(`ALTER TABLE "${name}" DISABLE TRIGGER USER`)
        const [{ occupied }] = await tx.unsafe(`SELECT EXISTS (SELECT 1 FROM wallets) OR EXISTS (SELECT 1 FROM feeds) OR EXISTS (SELECT 1 FROM transactions) OR EXISTS (SELECT 1 FROM payments) AS occupied`)
        if (occupied) throw new OccupiedDatabase()
        for (const { name } of [...tables].reverse()) await tx.unsafe(`DELETE FROM "${name}"`)
        let rows = 0
        for (const table of tables) rows += await copyTable(plainSqlite(db), postgresSql(tx), table)
        for (const { name } of tables) await tx.unsafe(`ALTER TABLE "${name}" ENABLE TRIGGER USER`)
        return { rows }
      })
    } finally {
      db.close()
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${scratch}${suffix}`, { force: true })
  }
}
