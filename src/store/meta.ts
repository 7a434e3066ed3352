// Facts about the database itself, by key: the chain it is bound to, the ledger check's cursor.
import { q, type Sql } from './query.ts'

export interface MetaStore {
  get(key: string): Promise<string | null>
  set(key: string, value: string): Promise<void>
  /** The value at `key`, set to `value` first if there was none: of several processes racing, one value wins for all. */
  claim(key: string, value: string): Promise<string>
}

export function metaStore(sql: Sql): MetaStore {
  return {
    get: async (key) => (await sql.get<{ value: string }>(q`SELECT value FROM meta WHERE key = ${key}`))?.value ?? null,
    async set(key, value) {
      await sql.run(q`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
    },
    async claim(key, value) {
      await sql.run(q`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO NOTHING`)
      return (await sql.get<{ value: string }>(q`SELECT value FROM meta WHERE key = ${key}`))!.value
    },
  }
}
