// `trellis verify-ledger`: the whole ledger against the chain, from a data directory (a running server may keep
// serving from it). Prints the report as JSON. Exit codes (see EXIT): a mismatch and an unreadable chain differ, so
// an RPC outage never reads as fraud.
import { existsSync } from 'node:fs'
import type { Config } from './config.ts'
import { databaseFile, DatabaseUnavailable, recordsName, recordsPlace, SchemaMismatch } from './store/open.ts'
import { bindingsOf, chainMismatch } from './store/chain-binding.ts'
import { redactUrl } from './chain/rpc.ts'
import { openLedgerCheck } from './app.ts'

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
  const path = databaseFile(config.dataDir)
  if (!config.databaseUrl && !existsSync(path)) {
    process.stderr.write(`trellis: no database at ${path}\n`)
    return EXIT.unusable
  }
  let check: Awaited<ReturnType<typeof openLedgerCheck>>
  try {
    check = await openLedgerCheck(config)
  } catch (error) {
    if (!(error instanceof SchemaMismatch) && !(error instanceof DatabaseUnavailable)) throw error
    process.stderr.write(`trellis: ${error.message}\n`)
    return EXIT.unusable
  }
  const { records, audit } = check
  try {
    // Checked against another chain, every row would read as a mismatch.
    const mismatch = await chainMismatch(records.read.meta, await recordsName(recordsPlace(config)), bindingsOf(config.networks))
    if (mismatch) {
      process.stderr.write(`trellis: ${mismatch}\n`)
      return EXIT.unusable
    }
    const tty = process.stderr.isTTY
    for (const network of config.networks)
      process.stderr.write(`checking the ledger against ${network.name} via ${redactUrl(network.rpcUrl)}\n`)
    const report = await audit.run({
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
