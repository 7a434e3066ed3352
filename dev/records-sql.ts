// Statements on a test server's records, whichever engine holds them (the data directory's trellis.db, or its
// PostgreSQL database): for tests that set up what no request can (a row as an older Trellis left it, a tampered
// ledger) or look at what no response shows. SQL text with `?` placeholders, valid on both engines.
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { join } from 'node:path'

export interface RecordsSql {
  readonly engine: 'sqlite' | 'postgres'
  run(text: string, values?: unknown[]): Promise<number>
  all<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>
  get<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T | undefined>
  close(): Promise<void>
}

/** What locates a test server's records: its data directory, and its database URL when it has one. */
export interface RecordsOf {
  dataDir: string
  recordsEnv?: Record<string, string>
}

const numbered = (text: string) => {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

export function recordsSql(server: RecordsOf, options: { readonly?: boolean } = {}): RecordsSql {
  // Directly when there is a pooler: this client prepares statements by name, which a transaction pooler mixes up.
  const url = server.recordsEnv?.TRELLIS_DATABASE_DIRECT_URL ?? server.recordsEnv?.TRELLIS_DATABASE_URL
  if (url) {
    const sql = new SQL(url, { max: 1 })
    const rows = async (text: string, values: unknown[] = []) =>
      (await sql.unsafe(numbered(text), values)) as unknown[] & { count: number | null }
    return {
      engine: 'postgres',
      run: async (text, values) => (await rows(text, values)).count ?? 0,
      all: async (text, values) => (await rows(text, values)) as unknown as never[],
      get: async (text, values) => (await rows(text, values))[0] as never,
      close: () => sql.close(),
    }
  }
  const db = new Database(join(server.dataDir, 'trellis.db'), options.readonly ? { readonly: true } : {})
  return {
    engine: 'sqlite',
    run: async (text, values = []) => db.query(text).run(...(values as never[])).changes,
    all: async (text, values = []) => db.query(text).all(...(values as never[])) as never[],
    get: async (text, values = []) => (db.query(text).get(...(values as never[])) ?? undefined) as never,
    close: async () => db.close(),
  }
}

/** `work` on the server's records, closed after. */
export async function withRecords<T>(
  server: RecordsOf,
  work: (db: RecordsSql) => Promise<T>,
  options: { readonly?: boolean } = {},
): Promise<T> {
  const db = recordsSql(server, options)
  try {
    return await work(db)
  } finally {
    await db.close()
  }
}
