// SQLite's errors as the faults of lib/store-faults.ts: a duplicate key, by its extended result code (never the
// message text), is UniqueViolation; anything else stays as it is. One file on disk is never "unreachable".
import { UniqueViolation } from '../../lib/store-faults.ts'

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'])

export const sqliteFault = (error: unknown): unknown =>
  UNIQUE_CODES.has((error as { code?: string })?.code ?? '') ? new UniqueViolation(error) : error
