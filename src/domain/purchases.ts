// Buying with an x402 payment, exactly once, and only when the chain shows it: a paid entry, or a feed's pass.
//
// A payment is written as pending before it is sent for settlement. It leaves 'pending' only when the chain decides:
// its settling transaction carries AuthorizationUsed(payer, nonce) next to Transfer(payer → owner, price) → settled
// (ledger row, totals, entitlement, one transaction); the authorization was spent otherwise or cancelled, or
// is unused after validBefore by chain time → failed. A settlement serves the bytes only to the request that
// brought the authorization first; anyone presenting it again (it is public once on chain) must sign in as the payer.
//
// This file takes requests in turn (one per authorization, one per purchase at a time) and reconciles what no request
// settles. Its parts: purchases/settle.ts (one attempt's settlement), purchases/fate.ts (the chain's decision of a
// pending row, and its recording), purchases/elsewhere.ts (waiting on a settlement another instance is doing),
// purchases/outcome.ts (what a request is answered).
import { goodKey, type Good } from './purchases/goods.ts'
import type { EntryRecord } from '../models/records.ts'
import { nowSeconds } from '../lib/clock.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { requirementsFor, type PaymentOrRefusal } from '../chain/x402/payload.ts'
import { REASONS } from '../chain/x402/reasons.ts'
import type { PurchaseDeps } from './purchases/deps.ts'
import { chainFate, type Fate } from './purchases/fate.ts'
import { otherInstances } from './purchases/elsewhere.ts'
import { settlement } from './purchases/settle.ts'
import { alreadySettled, outcomeOf, type PayOutcome } from './purchases/outcome.ts'

export type { PayOutcome } from './purchases/outcome.ts'
export { entryGood, type Good } from './purchases/goods.ts'

export function purchaseService(d: PurchaseDeps) {
  const inFlight = new Map<string, Promise<PayOutcome>>() // by authorization (payer, nonce)
  const buying = new Map<string, Promise<PayOutcome>>() // by purchase (payer, entry or pass)
  const read = d.records.read
  const fate = chainFate(d)
  const elsewhere = otherInstances(d, fate)
  const settleOnce = settlement(d, fate, elsewhere)
  const networks = d.engines.all.map((engine) => engine.network)

  /**
   * Pays for `good` (at the price `tag` states) with the payment a request carried. `signer` is the signed-in
   * wallet, if any. Requirements are rebuilt from the tag; nothing in the payment is trusted as a requirement.
   */
  async function pay(payment: PaymentOrRefusal, good: Good, tag: PriceTag, signer: string | null): Promise<PayOutcome> {
    if ('refused' in payment) return { kind: 'refused', reason: payment.refused }
    const auth = payment.authorization
    const checked = requirementsFor(payment, networks, tag)
    if ('refused' in checked) return { kind: 'refused', reason: checked.refused }
    const { requirements, network } = checked
    const engine = d.engines.named(network.name)!

    const existing = await read.payments.byKey(network.name, auth.from, auth.nonce)
    if (existing?.status === 'settled') return alreadySettled(existing, good, signer)
    // Concurrent submissions of one authorization: one settles; the others learn the outcome but are not served
    // by it (the payment header is not a bearer ticket).
    const key = `${network.name}:${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`
    const running = inFlight.get(key)
    if (running) {
      const first = await running.catch(() => null)
      if (first && first.kind !== 'paid') return first
      const row = await read.payments.byKey(network.name, auth.from, auth.nonce)
      return row ? outcomeOf(row, good, signer) : { kind: 'refused', reason: REASONS.inUse }
    }
    // A buyer's second authorization for the same entry waits for the first: once that one has bought the
    // entry, the second is served without being charged (for a pass, it then buys more time).
    // (On any network: a purchase is bought once, whichever chain pays for it.)
    const purchaseKey = `${auth.from.toLowerCase()}:${goodKey(good)}`
    const attempt = (async () => {
      for (let other = buying.get(purchaseKey); other; other = buying.get(purchaseKey)) await other.catch(() => {})
      const settling = settleOnce(payment, good, requirements, tag, signer, engine)
      buying.set(purchaseKey, settling)
      try {
        return await settling
      } finally {
        if (buying.get(purchaseKey) === settling) buying.delete(purchaseKey)
      }
    })().finally(() => inFlight.delete(key))
    inFlight.set(key, attempt)
    return attempt
  }

  /** Payments answered since start, by outcome (for /metrics). */
  const outcomes: Record<PayOutcome['kind'], number> = { paid: 0, refused: 0, unavailable: 0, pending: 0 }

  return {
    owns: (address: string, entryId: string) => read.purchases.owns(address, entryId),

    /**
     * Whether `address` may read `entry` without paying: it bought the entry, or a pass to its feed runs now.
     * `staleFrom` hears when that answer ends (the pass's end), for a caller that keeps it.
     */
    async entitled(address: string, entry: Pick<EntryRecord, 'id' | 'feed_id'>, staleFrom?: (at: number) => void): Promise<boolean> {
      if (await read.purchases.owns(address, entry.id)) return true
      const until = await read.passes.runningUntil(address.toLowerCase(), entry.feed_id, nowSeconds())
      if (until !== null) staleFrom?.(until)
      return until !== null
    },

    /** Of `entries`, those `address` may read without paying now (as entitled answers for each), in one query. */
    entitledAmong: (address: string, entries: readonly Pick<EntryRecord, 'id'>[]): Promise<Set<string>> =>
      read.purchases.entitledAmong(
        address,
        entries.map((entry) => entry.id),
        nowSeconds(),
      ),

    async pay(payment: PaymentOrRefusal, good: Good, tag: PriceTag, signer: string | null = null): Promise<PayOutcome> {
      const outcome = await pay(payment, good, tag, signer)
      outcomes[outcome.kind]++
      return outcome
    },

    outcomes: (): Readonly<Record<PayOutcome['kind'], number>> => outcomes,

    /** At start and periodically: let the chain decide every pending payment that no request is settling. */
    async reconcilePending(): Promise<Record<Fate, number>> {
      const counts = { settled: 0, failed: 0, pending: 0 }
      for (const row of await read.payments.pending()) {
        if (inFlight.has(`${row.network}:${row.payer_lc}:${row.nonce}`) || elsewhere.settlingElsewhere(row, false)) continue
        counts[await fate.decideSafely(row)]++
      }
      return counts
    },
  }
}
export type PurchaseService = ReturnType<typeof purchaseService>
