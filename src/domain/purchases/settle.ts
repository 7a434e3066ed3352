// One attempt to settle one payment: its pending row is written first (the lock: only the request whose write made it
// sends the authorization), then the settler is asked, and only the chain's answer moves the row out of 'pending'.
import type { PaymentRow } from '../../store/payments.ts'
import { isUniqueViolation } from '../../lib/store-faults.ts'
import { soldOf, type Good } from './goods.ts'
import { describeFailure } from '../../chain/rpc.ts'
import type { PriceTag } from '../../chain/x402/requirements.ts'
import { paymentRecord, type Authorization, type Payment } from '../../chain/x402/payload.ts'
import { REASONS } from '../../chain/x402/reasons.ts'
import { checksumAddress } from '../../chain/signatures.ts'
import { newId } from '../../lib/ids.ts'
import { nowSeconds } from '../../lib/clock.ts'
import { tracer } from '../../lib/traces.ts'
import type { PurchaseDeps } from './deps.ts'
import type { PaymentEngine } from '../../chain/x402/engine.ts'
import type { ChainFate } from './fate.ts'
import type { OtherInstances } from './elsewhere.ts'
import { alreadySettled, outcomeOf, paid, type PayOutcome } from './outcome.ts'

/** Rolls back a pending row written for an entry its buyer turned out to own already (a pass is bought again). */
class BoughtMeanwhile extends Error {}

export function settlement(d: PurchaseDeps, fate: ChainFate, elsewhere: OtherInstances) {
  const read = d.records.read
  const { decideSafely } = fate
  const { settlingElsewhere, settledElsewhere } = elsewhere

  /**
   * After a settlement attempt that may have sent a transaction: settled → this request is served; failed → 402 with
   * the chain's reason; otherwise 503 pending, whatever the settler said. A settler's refusal after sending (its
   * receipt wait timed out, a facilitator's success:false) is no verdict: the transaction can still be mined.
   */
  async function concludeFromChain(row: PaymentRow): Promise<PayOutcome> {
    const decided = await decideSafely(row)
    const now = (await read.payments.byKey(fate.engineOf(row).network.name, row.payer_lc, row.nonce))!
    if (decided === 'settled') return paid(now)
    if (decided === 'failed') return { kind: 'refused', reason: now.error ?? REASONS.settlementFailed }
    return { kind: 'pending', reason: REASONS.notConfirmed }
  }

  /**
   * Settles on `engine`'s network. `startedOver`: a second go, after another payment of the purchase was decided (it
   * waits no more).
   */
  async function settleOnce(
    payment: Payment,
    good: Good,
    requirements: unknown,
    tag: PriceTag,
    signer: string | null,
    engine: PaymentEngine,
    startedOver = false,
  ): Promise<PayOutcome> {
    const auth = payment.authorization
    const network = engine.network.name
    const chain = engine.chain
    const reread = async (auth: Authorization) => (await read.payments.byKey(network, auth.from, auth.nonce))!
    const refused = (reason: string): PayOutcome => ({ kind: 'refused', reason })
    const unavailable = (what: string, cause: string): PayOutcome => {
      d.log('payment backend unavailable', { what, cause, payer: auth.from.toLowerCase() })
      return { kind: 'unavailable', reason: `payment_backend_unavailable: ${what}; nothing was charged, retry the same payment later` }
    }

    let row = await read.payments.byKey(network, auth.from, auth.nonce)
    if (row?.status === 'settled') return alreadySettled(row, good, signer)
    if (row?.status === 'pending') {
      // Left by an earlier attempt (a crash, a pending answer), or being settled by another instance: only the chain
      // decides, and it is never sent twice.
      await decideSafely(row)
      row = await reread(auth)
      if (row.status === 'pending' && settlingElsewhere(row) && (await settledElsewhere(() => reread(auth)))) row = await reread(auth)
      if (row.status !== 'failed') return outcomeOf(row, good, signer)
    }

    const [verified, head] = await Promise.all([engine.verify(payment, requirements), chain.head().catch((error: unknown) => error)])
    if (verified.kind === 'backend') return unavailable('the payment could not be verified', verified.cause)
    if (verified.kind === 'invalid') return refused(verified.reason)
    const payer = checksumAddress(auth.from)
    // The feed owner, and a wallet that already bought the entry, are served without being charged; their
    // authorization (fresh, verified, never published) stays unused. A pass is bought again: it runs on.
    const owned = async (reader: typeof read) => good.kind === 'entry' && (await reader.purchases.owns(payer, good.entry.id))
    if (payer.toLowerCase() === tag.payTo.toLowerCase() || (await owned(read))) return { kind: 'paid', payer, transaction: null }
    if (head instanceof Error || !head) return unavailable('the chain could not be read', describeFailure(head))
    const submittedBlock = Number((head as { number: bigint }).number)

    const now = nowSeconds()
    const kept = paymentRecord(payment, requirements)
    const sold = soldOf(good)
    // The pending row is the lock: only the request whose write made (or re-opened) it settles; another that raced it
    // (another instance, on a shared database) answers from the row.
    const failed = row
    await d.beforePending?.()
    // On an engine with concurrent writers, a re-opened failed row can meet another pending payment of the purchase
    // at the unique index (its NOT EXISTS saw none): that too means another payment is settling.
    const mine = await d.records
      .transact(async (tx) => {
        const made = await (failed
          ? tx.payments.retryFailed(failed.id, sold, kept.payload, kept.requirements, submittedBlock, d.records.instance, now)
          : tx.payments.insertPending({
              id: newId(),
              payer_lc: auth.from.toLowerCase(),
              nonce: auth.nonce,
              sold,
              pay_to: tag.payTo,
              amount: BigInt(tag.amount),
              ...kept,
              valid_before: Number(auth.validBefore),
              submitted_block: submittedBlock,
              settler: d.records.instance,
              network,
              now,
            }))
        // Another payment of this buyer may have bought the entry since the check above (settled on another instance
        // between that read and this write). Asked after the write, in its transaction, the question sees it: the
        // unique index of pending purchases made this write wait for that payment's commit, which grants the entry.
        if (made && (await owned(tx))) throw new BoughtMeanwhile()
        return made
      })
      .catch((error: unknown) => {
        if (error instanceof BoughtMeanwhile) return 'bought' as const
        if (isUniqueViolation(error)) return false
        throw error
      })
    if (mine === 'bought') return { kind: 'paid', payer, transaction: null }
    if (!mine) {
      let now = await read.payments.byKey(network, auth.from, auth.nonce)
      if (!now || now.status === 'failed') {
        // No row of its own (or its failed one not re-opened): another payment of this purchase is being settled. On a
        // shared database that may be another instance's: once it is decided, this one starts over (and is served
        // free if that one bought the entry).
        const other = await read.payments.pendingPurchase(auth.from, sold)
        if (startedOver || !other) return { kind: 'pending', reason: REASONS.purchasePending(good.kind) }
        // Settled by nobody now (an earlier request here answered 503, or its instance is gone): the chain decides it
        // at once, so a buyer whose first payment was mined since is served by the next try, free.
        const over = settlingElsewhere(other)
          ? await settledElsewhere(() => read.payments.pendingPurchase(auth.from, sold))
          : (await decideSafely(other)) !== 'pending'
        return over
          ? settleOnce(payment, good, requirements, tag, signer, engine, true)
          : { kind: 'pending', reason: REASONS.purchasePending(good.kind) }
      }
      // The same authorization, sent to another instance at the same moment: its outcome (not served by it).
      if (now.status === 'pending' && settlingElsewhere(now) && (await settledElsewhere(() => reread(auth)))) now = await reread(auth)
      return outcomeOf(now, good, signer)
    }
    row = await reread(auth)
    const id = row.id

    const recordSigned = (hash: `0x${string}`) =>
      d.records.transact((tx) => tx.payments.recordSigned(id, hash, nowSeconds())).then(() => {})
    const outcome = await engine.settle(payment, requirements, recordSigned)
    row = await reread(auth)
    if (outcome.kind === 'claimed') {
      d.afterSettle?.()
      try {
        const proof = await chain.prove(outcome.hash, fate.expectedOf(row))
        if (proof?.kind === 'paid') {
          await fate.record(row, proof)
          return paid(await reread(auth))
        }
        const claim = proof ? 'a transaction that does not pay this purchase' : 'a transaction the chain does not show yet'
        d.log(`payment: the settler claimed ${claim}`, { payment: id, transaction: outcome.hash })
      } catch (error) {
        d.log('payment: settlement not confirmed, left pending', { payment: id, cause: describeFailure(error) })
        return { kind: 'pending', reason: REASONS.notConfirmed }
      }
      return concludeFromChain(row)
    }
    if (!outcome.sent) {
      // Nothing was signed, so nothing can land: the attempt is over and the same authorization may be sent again.
      const reason = outcome.kind === 'refused' ? outcome.reason : REASONS.backendUnavailable
      await d.records.transact((tx) => tx.payments.markFailed(id, reason, nowSeconds()))
      return outcome.kind === 'refused' ? refused(outcome.reason) : unavailable('the settlement could not be submitted', outcome.cause)
    }
    // Sent (or possibly sent): only the chain says whether it was taken, never the settler's answer.
    const said = outcome.kind === 'refused' ? { reason: outcome.reason } : { cause: outcome.cause }
    d.log('payment: settlement not confirmed by the settler, the chain decides', { payment: id, ...said })
    return concludeFromChain(row)
  }

  // With traces on, each attempt is a span ending with its outcome's kind; the verification, chain calls and records
  // it made are its children (a second go after another payment was decided stays inside it).
  const traces = tracer()
  if (traces === null) return settleOnce
  const inSpan: typeof settleOnce = (payment, good, requirements, tag, signer, engine, startedOver) =>
    traces.span('payment settlement', { 'x402.network': engine.network.name }, async (span) => {
      const outcome = await settleOnce(payment, good, requirements, tag, signer, engine, startedOver)
      span.set('payment.outcome', outcome.kind)
      return outcome
    })
  return inSpan
}
