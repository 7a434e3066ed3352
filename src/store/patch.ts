// UPDATE <table> SET <values>, updated_at = now WHERE id = ?, for the stores whose rows are patched field by field.
import { isUniqueViolation, join, q, sqlText, type Sql } from './query.ts'

/** False when a UNIQUE index refuses the new values: the database decides, so concurrent writers cannot both win. */
export async function patchRow(sql: Sql, table: 'wallets' | 'feeds' | 'categories', id: string, values: Record<string, string | number | bigint | null>, now: number): Promise<boolean> {
  const sets = [...Object.entries(values).map(([column, value]) => q`${sqlText(column)} = ${value}`), q`updated_at = ${now}`]
  try {
    await sql.run(q`UPDATE ${sqlText(table)} SET ${join(sets, ', ')} WHERE id = ${id}`)
    return true
  } catch (error) {
    if (isUniqueViolation(error)) return false
    throw error
  }
}
