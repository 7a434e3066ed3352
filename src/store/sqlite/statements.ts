// Queries on one bun:sqlite connection, run at once (synchronously): the prepared statement of a fragment-free query
// is kept by its template, so no SQL text is rendered or hashed on the way to it after its first time.
import type { Database, Statement } from 'bun:sqlite'
import { render, type Query, type Sql } from '../query.ts'
import { sqliteFault } from './faults.ts'

export interface SyncStatements {
  all<T>(query: Query): T[]
  get<T>(query: Query): T | undefined
  run(query: Query): number
}

const hasFragments = (query: Query) =>
  query.values.some((value) => typeof value === 'object' && value !== null && 'strings' in value && 'values' in value)

export function sqliteStatements(db: Database): SyncStatements {
  const prepared = new WeakMap<readonly string[], Statement>()
  function statement(query: Query): { statement: Statement; values: never[] } {
    if (!hasFragments(query)) {
      let found = prepared.get(query.strings)
      if (!found) prepared.set(query.strings, (found = db.query(render(query, '?').text)))
      return { statement: found, values: query.values as never[] }
    }
    const { text, values } = render(query, '?')
    return { statement: db.query(text), values: values as never[] }
  }
  /** `use` of the query's statement, its error as the fault it is (an INSERT … RETURNING is read with all or get). */
  function using<R>(query: Query, use: (statement: Statement, values: never[]) => R): R {
    const { statement: s, values } = statement(query)
    try {
      return use(s, values)
    } catch (error) {
      throw sqliteFault(error)
    }
  }
  return {
    all: <T>(query: Query) => using(query, (s, values) => s.all(...values) as T[]),
    get: <T>(query: Query) => using(query, (s, values) => (s.get(...values) as T | null) ?? undefined),
    run: (query: Query) => using(query, (s, values) => s.run(...values).changes),
  }
}

/** The same statements behind the Sql port, for a connection no one else uses (no gate, no group commit). */
export function plainSqlite(db: Database): Sql {
  const run = sqliteStatements(db)
  return {
    all: async (query) => run.all(query),
    get: async (query) => run.get(query),
    run: async (query) => run.run(query),
  }
}

/** Makes SQLite's full-text index of search_docs (024) again from its rows: after rows were copied in with triggers off. */
export const rebuildSearchIndex = (db: Database): void => void db.exec("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
