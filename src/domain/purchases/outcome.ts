// What a request that paid is answered, from the payment's row when this request did not settle it itself.
import type { PaymentRow } from '../../store/payments.ts'
import { boughtBy, type Good } from './goods.ts'
import { REASONS } from '../../chain/x402/reasons.ts'
import { checksumAddress } from '../../chain/signatures.ts'

export type PayOutcome =
  /** Served. `transaction`: the one that paid, or null when nothing was charged (the payer already owns the entry). */
  | { kind: 'paid'; payer: string; transaction: string | null }
  /** 402: the payment is refused (or already used); the challenge again, with the reason. */
  | { kind: 'refused'; reason: string }
  /** 502: the facilitator or the RPC failed before anything could be charged; the same payment may be retried. */
  | { kind: 'unavailable'; reason: string }
  /** 503: a charge may be on its way; it is recorded when the chain shows it. */
  | { kind: 'pending'; reason: string }

export function paid(row: PaymentRow): PayOutcome {
  return { kind: 'paid', payer: checksumAddress(row.payer_lc), transaction: row.transaction_hash! }
}

/** An authorization that already paid is not a ticket: the payer reads again by signing in. */
export function alreadySettled(row: PaymentRow, good: Good, signer: string | null): PayOutcome {
  const same = boughtBy(row, good)
  if (same && signer?.toLowerCase() === row.payer_lc) return paid(row)
  if (!same) return { kind: 'refused', reason: REASONS.usedForAnother }
  return { kind: 'refused', reason: good.kind === 'entry' ? REASONS.alreadyBought : REASONS.passAlreadyBought }
}

/** The outcome of a row whose settlement this request did not start. */
export function outcomeOf(row: PaymentRow, good: Good, signer: string | null): PayOutcome {
  if (row.status === 'settled') return alreadySettled(row, good, signer)
  if (row.status === 'failed') return { kind: 'refused', reason: row.error ?? REASONS.settlementFailed }
  return { kind: 'pending', reason: REASONS.sentPending }
}
