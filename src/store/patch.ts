// UPDATE <table> SET <values>, updated_at = now WHERE id = ?, for the stores whose rows are patched field by field.
import { join, q, sqlText, type Sql } from './query.ts'
import { isUniqueViolation } from '../lib/store-faults.ts'

/**
 * False when a UNIQUE index refuses the new values: the database decides, so concurrent writers cannot both win.
 * Inside a transaction only: the statement runs under a savepoint, since on PostgreSQL a refused statement aborts
 * the whole transaction unless rolled back to one (SQLite undoes the statement alone, and the savepoint costs nothing).
 */
export async function patchRow(
  sql: Sql,
  table: 'wallets' | 'feeds' | 'categories' | 'entries',
  id: string,
  values: Record<string, string | number | bigint | null>,
  now: number,
): Promise<boolean> {
  const sets = [...Object.entries(values).map(([column, value]) => q`${sqlText(column)} = ${value}`), q`updated_at = ${now}`]
  await sql.run(q`SAVEPOINT patch_row`)
  try {
    await sql.run(q`UPDATE ${sqlText(table)} SET ${join(sets, ', ')} WHERE id = ${id}`)
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    await sql.run(q`ROLLBACK TO SAVEPOINT patch_row`)
    await sql.run(q`RELEASE SAVEPOINT patch_row`)
    return false
  }
  await sql.run(q`RELEASE SAVEPOINT patch_row`)
  return true
}
