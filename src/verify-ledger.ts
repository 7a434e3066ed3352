// `trellis verify-ledger`: the whole ledger against the chain, from a data directory (a running server may keep
// serving from it). Prints the report as JSON. Exit codes (see EXIT): a mismatch and an unreadable chain differ, so
// an RPC outage never reads as fraud.
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from './config.ts'
import { MIGRATIONS, newerSchema } from './store/migrations/index.ts'
import { embeddedRecords } from './store/sqlite/records.ts'
import { chainMismatch } from './store/chain-binding.ts'
import { ledgerAudit } from './domain/ledger-audit.ts'
import { chainReader } from './chain/reader.ts'
import { redactUrl, watchedHttp } from './chain/rpc.ts'

export const EXIT = {
  /** The ledger equals the chain. */
  equal: 0,
  /** Problems found: the ledger and the chain (or the ledger and its totals) disagree. */
  mismatch: 1,
  /** No database, or one this binary cannot read (an older or newer schema). */
  unusable: 2,
  /** Nothing found wrong, but the chain could not be read (RPC down or failing): could not check. */
  unreadable: 3,
} as const

export async function verifyLedger(config: Config): Promise<number> {
  const path = join(config.dataDir, 'trellis.db')
  if (!existsSync(path)) {
    process.stderr.write(`trellis: no database at ${path}\n`)
    return EXIT.unusable
  }
  const db = new Database(path, { strict: true })
  db.exec('PRAGMA busy_timeout = 5000')
  const records = embeddedRecords(db)
  try {
    const version = db.query<{ v: number | null }, []>('SELECT MAX(version) AS v FROM schema_migrations').get()?.v ?? 0
    const newer = newerSchema(version, `the database ${path}`)
    if (newer) {
      process.stderr.write(`trellis: ${newer}\n`)
      return EXIT.unusable
    }
    if (version < MIGRATIONS.length) {
      process.stderr.write('trellis: this data directory has an older schema; start the server once to migrate it\n')
      return EXIT.unusable
    }
    // Checked against another chain, every row would read as a mismatch.
    const mismatch = await chainMismatch(records.read.meta, config.dataDir, { network: config.network.name, chain_id: config.network.chainId, token: config.network.usdcAddress })
    if (mismatch) {
      process.stderr.write(`trellis: ${mismatch}\n`)
      return EXIT.unusable
    }
    const chain = chainReader(watchedHttp(config.network.rpcUrl, 20_000), config.network.usdcAddress, { logWindow: BigInt(config.logWindowBlocks) })
    const tty = process.stderr.isTTY
    process.stderr.write(`checking the ledger against ${config.network.name} via ${redactUrl(config.network.rpcUrl)}\n`)
    const report = await ledgerAudit({ records, chain, token: config.network.usdcAddress }).run({
      full: true,
      onProgress: tty ? (done) => process.stderr.write(`\r${done} ledger rows proven`) : undefined,
    })
    if (tty) process.stderr.write('\n')
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    if (report.problems.length > 0) return EXIT.mismatch
    if (report.unreadable) {
      process.stderr.write(`trellis: could not check the ledger: the chain is not readable (${report.unreadable.cause})\n`)
      return EXIT.unreadable
    }
    return EXIT.equal
  } finally {
    await records.close()
  }
}
