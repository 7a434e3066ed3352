// Every record from one engine to the other, for backups of PostgreSQL (its rows into a fresh SQLite file, the backup
// format both engines share) and restores into PostgreSQL (a backup's rows into a database with no market yet).
// Tables go in an order that puts each row after the rows it references, each in key order and in pages. The
// tallies are tables of their own and are copied as they are: the receiving side's triggers stay off meanwhile
// (each adapter sees to that), or every sale would be counted twice.
import type { Database } from 'bun:sqlite'
import { join, q, sqlText, type Query, type Sql } from '../query.ts'

export interface TableShape {
  name: string
  columns: string[]
  /** The primary key's columns, in key order: the pages' order. */
  key: string[]
}

/** Rows per statement: well under either engine's limit on parameters (SQLite 32766, PostgreSQL 65535). */
const PAGE = 500

/** Not copied: the migrations made them on the receiving side, at this binary's schema. */
const SKIPPED = new Set(['schema_migrations'])

/**
 * The tables of a migrated embedded database (the shape both engines share), referenced tables first. Plain tables
 * only: a virtual table and its shadow tables (SQLite's full-text index, search_fts) are the engine's index of rows
 * copied here, made again from them (rebuildSearchIndex).
 */
export function tablesOf(db: Database): TableShape[] {
  const names = db
    .query<{ name: string }, []>(
      "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    .map((r) => r.name)
    .filter((name) => !SKIPPED.has(name))
  const shapes = new Map(
    names.map((name) => {
      const columns = db.query<{ name: string; pk: number }, [string]>('SELECT name, pk FROM pragma_table_info(?) ORDER BY cid').all(name)
      const key = columns
        .filter((c) => Number(c.pk) > 0)
        .sort((a, b) => Number(a.pk) - Number(b.pk))
        .map((c) => c.name)
      return [name, { name, columns: columns.map((c) => c.name), key }]
    }),
  )
  const ordered: TableShape[] = []
  const placed = new Set<string>()
  const place = (name: string, path: Set<string>) => {
    if (placed.has(name) || path.has(name)) return
    path.add(name)
    const referenced = db.query<{ table: string }, [string]>('SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)').all(name)
    for (const { table } of referenced) if (table !== name && shapes.has(table)) place(table, path)
    placed.add(name)
    ordered.push(shapes.get(name)!)
  }
  for (const name of names) place(name, new Set())
  return ordered
}

const list = (names: string[]) => sqlText(names.map((name) => `"${name}"`).join(', '))

type Row = Record<string, unknown>

/**
 * Copies `table`'s rows (those `keep` accepts, as `change` makes them) from `from` to `to`, page by page in key order;
 * answers how many.
 */
export async function copyTable(
  from: Sql,
  to: Sql,
  table: TableShape,
  options: { keep?: (row: Row) => boolean; change?: (row: Row) => Row; onRows?: (n: number) => void } = {},
): Promise<number> {
  const columns = list(table.columns)
  const key = list(table.key)
  let after: unknown[] | null = null
  let copied = 0
  for (;;) {
    const past: Query = after
      ? q`WHERE (${key}) > (${join(
          after.map((value) => q`${value}`),
          ', ',
        )})`
      : q``
    const rows: Record<string, unknown>[] = await from.all<Record<string, unknown>>(
      q`SELECT ${columns} FROM ${sqlText(`"${table.name}"`)} ${past} ORDER BY ${key} LIMIT ${PAGE}`,
    )
    if (rows.length === 0) return copied
    after = table.key.map((column) => rows[rows.length - 1]![column])
    const filtered = options.keep ? rows.filter(options.keep) : rows
    const kept = options.change ? filtered.map(options.change) : filtered
    if (kept.length > 0) {
      const values = join(
        kept.map(
          (row) =>
            q`(${join(
              table.columns.map((column) => q`${row[column]}`),
              ', ',
            )})`,
        ),
        ', ',
      )
      await to.run(q`INSERT INTO ${sqlText(`"${table.name}"`)} (${columns}) VALUES ${values}`)
      copied += kept.length
      options.onRows?.(kept.length)
    }
    if (rows.length < PAGE) return copied
  }
}
