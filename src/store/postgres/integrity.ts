// PostgreSQL's check of its own files, as `trellis verify` asks it: amcheck's B-tree checks (bt_index_check, with
// heapallindexed: every row is in its indexes) on each index of the database's tables, when the extension is
// installed there. PostgreSQL itself ships it; installing it is the database owner's choice (CREATE EXTENSION
// amcheck), so where it is missing the check says it was skipped instead of passing silently.
import type { SQL } from 'bun'

export async function checkIndexes(sql: SQL): Promise<{ problems: string[]; skipped?: string }> {
  const [{ installed }] = await sql.unsafe("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck') AS installed")
  if (!installed)
    return { problems: [], skipped: 'amcheck is not installed in this database (CREATE EXTENSION amcheck enables the index checks)' }
  const indexes = (await sql.unsafe(`SELECT c.oid::regclass::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
    WHERE n.nspname = current_schema() AND a.amname = 'btree' AND i.indisvalid ORDER BY 1`)) as { name: string }[]
  const problems: string[] = []
  for (const { name } of indexes) {
    try {
      await sql.unsafe('SELECT bt_index_check($1::regclass, true)', [name])
    } catch (error) {
      problems.push(`index ${name}: ${(error as Error).message}`)
    }
  }
  return { problems }
}
