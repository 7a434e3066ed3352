// Statements on PostgreSQL through Bun's built-in SQL client: the Query of store/query.ts rendered with $n
// placeholders. Rows come back as objects; bigint columns as strings unless the client is told otherwise, so the
// stores' mappers (Number, BigInt) read both engines alike.
import type { SQL } from 'bun'
import { render, type Query, type Sql } from '../query.ts'
import { reaching } from './faults.ts'

/** The statements of one connection, pool or transaction (`sql` or the `tx` Bun's `sql.begin` hands over). */
export function postgresSql(sql: SQL): Sql {
  const rows = async <T>(query: Query) => {
    const { text, values } = render(query, '$')
    return (await reaching(() => sql.unsafe(text, values))) as T[] & { count: number | null }
  }
  return {
    all: rows,
    get: async <T>(query: Query) => (await rows<T>(query))[0],
    run: async (query: Query) => (await rows(query)).count ?? 0,
  }
}
