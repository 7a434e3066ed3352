// The ledger must equal the chain: every ledger row is proven by its transaction's receipt (AuthorizationUsed next
// to the Transfer it records), every authorization we sent for settlement is in the ledger or really did not pay,
// and the totals are sums of the ledger. `trellis verify-ledger` checks everything; the job checks what is new.
import type { Hex } from 'viem'
import type { ChainReader } from '../chain/reader.ts'
import { describeFailure } from '../chain/rpc.ts'
import type { Records } from '../store/stores.ts'

export interface AuditReport {
  /** The ledger equals the chain: no problem found, and the chain could be read throughout. */
  ok: boolean
  /**
   * The chain could not be read (RPC down or failing): the rows in `subjects` were not checked, so this run proves
   * nothing about them. Not a mismatch: `problems` lists only what was found wrong.
   */
  unreadable: { cause: string; subjects: string[] } | null
  /** Ledger rows proven against the chain in this run. */
  proven: number
  /** The same, by the network each was settled on. */
  provenByNetwork: Record<string, number>
  /** Failed payments re-checked against the chain in this run. */
  failedChecked: number
  transactions: number
  revenue: string
  pending: number
  problems: { problem: string; subjects: string[] }[]
}

const CURSOR = 'ledger_proven_through'
const BATCH = 500
// Reads of one batch of receipts run this many at a time.
const PARALLEL = 8

async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++])
    }),
  )
}

/** The chain of each network read, by its name (the payment engines are such a set). */
export interface ChainsRead {
  named(network: string | null): { chain: ChainReader; network: { usdcAddress: Hex } } | undefined
}

export function ledgerAudit(d: { records: Records; chains: ChainsRead }) {
  /** The chain and token of a row's network; a network this server does not read cannot be checked. */
  const chainOf = (network: string | null) => {
    const read = d.chains.named(network)
    if (!read) throw new Error(`the chain ${network} is not read by this server (TRELLIS_NETWORKS)`)
    return { chain: read.chain, token: read.network.usdcAddress }
  }
  const store = d.records.read.audit
  // The audit's own bookmark: no read of it is kept, so writing it drops nothing from the memo.
  const setCursor = (cursor: string) => d.records.transact((tx) => tx.meta.set(CURSOR, cursor), { unkept: true })
  let lastFailedCheck = 0

  /**
   * `full`: every ledger row and every failed submission, from the start. Otherwise only what was added since the
   * last run (the proven cursor is kept in the database, so a restart does not re-read a million receipts).
   */
  async function run(
    options: {
      full: boolean
      onProgress?: (done: number) => void
      /** The SQL checks read the whole ledger: a server runs them on another thread and passes them in here. */
      inconsistencies?: () => Promise<AuditReport['problems']>
    } = { full: false },
  ): Promise<AuditReport> {
    const problems: AuditReport['problems'] = [
      ...(options.inconsistencies ? await options.inconsistencies() : await d.records.snapshot((view) => view.audit.inconsistencies())),
    ]
    const note = (problem: string, subject: string) => {
      const known = problems.find((p) => p.problem === problem)
      if (known) known.subjects.length < 20 && known.subjects.push(subject)
      else problems.push({ problem, subjects: [subject] })
    }
    const startedAt = Math.floor(Date.now() / 1000)

    // The job's first run on an existing ledger starts at its end: proving years of history is the CLI's work,
    // not something to put on a public RPC at every upgrade.
    let cursor = ''
    if (!options.full) {
      cursor = (await d.records.read.meta.get(CURSOR)) ?? (await store.lastLedgerId())
      await setCursor(cursor)
    }
    let proven = 0
    const provenByNetwork: Record<string, number> = {}
    let unreadable: AuditReport['unreadable'] = null
    const cannotRead = (error: unknown, subject: string) => {
      unreadable ??= { cause: describeFailure(error), subjects: [] }
      if (unreadable.subjects.length < 20) unreadable.subjects.push(subject)
    }
    for (;;) {
      const rows = await store.ledgerRowsAfter(cursor, BATCH)
      if (rows.length === 0) break
      await inParallel(rows, PARALLEL, async (row) => {
        if (!row.nonce) return note('ledger row without its payment authorization', row.id)
        try {
          const { chain, token } = chainOf(row.network)
          const proof = await chain.prove(row.transaction_hash as Hex, {
            token,
            payer: row.payer_lc,
            payTo: row.pay_to_lc,
            amount: BigInt(row.amount),
            nonce: row.nonce,
          })
          if (proof?.kind !== 'paid')
            note(proof ? 'ledger row not matched by its on-chain transfer' : 'ledger row whose transaction is not on chain', row.id)
          else {
            proven++
            provenByNetwork[row.network!] = (provenByNetwork[row.network!] ?? 0) + 1
          }
        } catch (error) {
          cannotRead(error, row.id)
        }
      })
      if (unreadable) break
      cursor = rows[rows.length - 1].id
      if (!options.full) await setCursor(cursor)
      options.onProgress?.(proven)
    }

    // A failed payment we had sent for settlement must really not have paid (else a buyer was charged for nothing).
    const failed = await store.failedSubmissionsSince(options.full ? 0 : lastFailedCheck)
    await inParallel(failed, PARALLEL, async (row) => {
      try {
        const { chain, token } = chainOf(row.network)
        if (!(await chain.authorizationUsed(row.payer_lc as Hex, row.nonce as Hex))) return
        const event = await chain.findAuthorizationEvent(
          row.payer_lc as Hex,
          row.nonce as Hex,
          BigInt(Math.max(0, row.submitted_block - 5)),
        )
        if (event?.kind !== 'used') return
        const proof = await chain.prove(event.hash, {
          token,
          payer: row.payer_lc,
          payTo: row.pay_to,
          amount: BigInt(row.amount),
          nonce: row.nonce,
        })
        if (proof?.kind === 'paid') note('failed payment that the chain shows as paid (a lost purchase)', row.id)
      } catch (error) {
        cannotRead(error, row.id)
      }
    })
    if (!unreadable) lastFailedCheck = startedAt - 60

    const totals = await store.totals()
    return {
      ok: problems.length === 0 && unreadable === null,
      unreadable,
      proven,
      provenByNetwork,
      failedChecked: failed.length,
      transactions: totals.transactions,
      revenue: totals.revenue,
      pending: (await store.pending()).n,
      problems,
    }
  }

  return { run }
}
export type LedgerAudit = ReturnType<typeof ledgerAudit>
