// Buying a paid entry with an x402 payment, exactly once, and only when the chain shows it.
//
// A payment is written as pending before it is sent for settlement. It leaves 'pending' only when the chain decides:
// its settling transaction carries AuthorizationUsed(payer, nonce) next to Transfer(payer → owner, price) → settled
// (ledger row, totals, entitlement, one SQLite transaction); the authorization was spent otherwise or cancelled, or
// is unused after validBefore by chain time → failed. A settlement serves the bytes only to the request that
// brought the authorization first; anyone presenting it again (it is public once on chain) must sign in as the payer.
import type { PaymentRow } from '../store/payments.ts'
import type { Records } from '../store/stores.ts'
import { isUniqueViolation } from '../store/query.ts'
import type { EntryRecord } from '../models/records.ts'
import type { NetworkInfo } from '../config.ts'
import type { PaymentEngine } from '../chain/x402/engine.ts'
import type { Proof } from '../chain/settlement-proof.ts'
import { describeFailure } from '../chain/rpc.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { paymentRecord, requirementsFor, type Authorization, type Payment, type PaymentOrRefusal } from '../chain/x402/payload.ts'
import { REASONS } from '../chain/x402/reasons.ts'
import { checksumAddress } from '../chain/signatures.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'

export type PayOutcome =
  /** Served. `transaction`: the one that paid, or null when nothing was charged (the payer already owns the entry). */
  | { kind: 'paid'; payer: string; transaction: string | null }
  /** 402: the payment is refused (or already used); the challenge again, with the reason. */
  | { kind: 'refused'; reason: string }
  /** 502: the facilitator or the RPC failed before anything could be charged; the same payment may be retried. */
  | { kind: 'unavailable'; reason: string }
  /** 503: a charge may be on its way; it is recorded when the chain shows it. */
  | { kind: 'pending'; reason: string }

type Fate = 'settled' | 'failed' | 'pending'

interface Deps {
  records: Records
  engine: PaymentEngine
  network: NetworkInfo
  log: (msg: string, fields?: Record<string, unknown>) => void
  /** Info-level lines: every settled payment is one (an operator's trail from sale to transaction). */
  logInfo?: (msg: string, fields?: Record<string, unknown>) => void
  /** Fault injection for tests: called between a successful settlement and its recording. */
  afterSettle?: () => void
  /** How long a request waits for another instance's settlement before it answers 503 pending (TRELLIS_CONFIRM_TIMEOUT_S). */
  waitS?: number
}

// An unused authorization is dead once the chain's clock has passed validBefore; the margin covers reorgs.
const EXPIRY_MARGIN_S = 60
// Searches for an authorization's event start a few blocks before we asked for settlement.
const SEARCH_SLACK_BLOCKS = 5
// Rows written before the submission block was recorded: search this far back.
const LEGACY_LOOKBACK_BLOCKS = 50_000
// While waiting: the row is read again this often (and at each notice of a decided payment), the chain every DECIDE_EVERY reads.
const POLL_MS = 250
const DECIDE_EVERY = 8
// A settlement under way touches its row at least this often (its start, its signed transaction, then at most the
// wait for its receipt): a pending row left longer by a live instance is no longer being settled there.
const SETTLING_SLACK_S = 30
// A request meeting a row its settler wrote this recently waits for it, even when that instance's heartbeat went
// unheard for a moment (a busy host runs late by more than the heartbeat's 1.5 s; a fresh-clone CI run showed it).
// The reconciler does not: a row left by an instance that is gone (a restart) is decided at once.
const JUST_WRITTEN_S = 5

export function purchaseService(d: Deps) {
  const inFlight = new Map<string, Promise<PayOutcome>>() // by authorization (payer, nonce)
  const buying = new Map<string, Promise<PayOutcome>>() // by purchase (payer, entry)
  const chain = d.engine.chain
  const read = d.records.read
  const waitMs = (d.waitS ?? 30) * 1000

  // Instances on one database: a payment decided by any of them wakes the requests here that wait for one.
  const waiting = new Set<() => void>()
  d.records.cluster?.hear('payments', () => waiting.forEach((wake) => wake()))
  /**
   * Pending, and being settled by another instance: one that lives (heard in the heartbeats) and touched the row
   * recently (for a request: or that wrote it just now). Waited for, and left alone by the reconciler; decided from
   * the chain otherwise.
   */
  const settlingElsewhere = (row: PaymentRow, request = true) => {
    if (row.settler === null || row.settler === d.records.instance || !d.records.cluster) return false
    const age = nowSeconds() - row.updated_at
    return (request && age < JUST_WRITTEN_S) || (age < (d.waitS ?? 30) + SETTLING_SLACK_S && d.records.cluster.alive(row.settler))
  }

  /** Asks `check` until it answers, at each decided payment heard of or every POLL_MS; undefined once the wait is over. */
  async function awaitDecision<T>(check: (attempt: number) => Promise<T | undefined>): Promise<T | undefined> {
    const deadline = performance.now() + waitMs
    for (let attempt = 1; ; attempt++) {
      const found = await check(attempt)
      if (found !== undefined || performance.now() >= deadline) return found
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          waiting.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, Math.min(POLL_MS, deadline - performance.now()))
        waiting.add(wake)
      })
    }
  }

  /**
   * Waits while `current()` is a pending payment another instance settles, until it is decided (or gone): true, or
   * false at the end of the wait. The chain is asked now and then too, in case nobody settles it any more.
   */
  async function settledElsewhere(current: () => Promise<PaymentRow | undefined>): Promise<boolean> {
    const over = await awaitDecision(async (attempt) => {
      let row = await current()
      if (row?.status === 'pending' && attempt % DECIDE_EVERY === 0) {
        await decideSafely(row)
        row = await current()
      }
      return row?.status === 'pending' ? undefined : true
    })
    return over === true
  }

  const expectedOf = (row: PaymentRow) => ({ token: d.network.usdcAddress, payer: row.payer_lc, payTo: row.pay_to, amount: BigInt(row.amount), nonce: row.nonce })

  /** One transaction: payment settled, ledger row, totals, payer wallet, entitlement. */
  async function record(row: PaymentRow, proof: Extract<Proof, { kind: 'paid' }>): Promise<void> {
    const recorded = await d.records.transact(async (tx) => {
      const now = nowSeconds()
      if (!(await tx.payments.markSettled(row.id, proof.hash, Number(proof.block), now))) return false // recorded already
      const payer = checksumAddress(row.payer_lc)
      const walletId = await tx.wallets.ensure(newId(), payer, d.network.name, now)
      const transactionId = newId()
      const amount = BigInt(row.amount)
      // The entry's and feed's rows before the ledger row's tallies lock the addresses' rows: creating an entry takes
      // them in that order too, so the two never wait on each other in a cycle (PostgreSQL would break it as a deadlock).
      await tx.purchases.addToTotals(row.entry_id, amount)
      await tx.transactions.insert({ id: transactionId, piid: row.id, payer, pay_to: checksumAddress(row.pay_to), amount, asset: 'USDC', entry_id: row.entry_id, transaction_hash: proof.hash, created_at: now })
      await tx.purchases.grant(walletId, row.entry_id, transactionId, now)
      return true
    })
    if (recorded) d.logInfo?.('payment settled', { entry: row.entry_id, payer: checksumAddress(row.payer_lc), pay_to: checksumAddress(row.pay_to), amount: row.amount, transaction: proof.hash, payment: row.id })
  }

  async function recordFailure(row: PaymentRow, reason: string): Promise<Fate> {
    await d.records.transact((tx) => tx.payments.markFailed(row.id, reason, nowSeconds()))
    d.log('payment failed', { payment: row.id, reason })
    return 'failed'
  }

  /** What the chain says about a payment. Throws when the chain cannot be read. */
  async function decide(row: PaymentRow): Promise<Fate> {
    const expected = expectedOf(row)
    const payer = row.payer_lc as `0x${string}`
    const nonce = row.nonce as `0x${string}`
    let ownTransactionFinal = false
    if (row.submitted_hash) {
      const proof = await chain.prove(row.submitted_hash as `0x${string}`, expected)
      if (proof?.kind === 'paid') {
        await record(row, proof)
        return 'settled'
      }
      ownTransactionFinal = proof !== null // mined without paying us
    }
    if (await chain.authorizationUsed(payer, nonce)) {
      const from = row.submitted_block !== null ? row.submitted_block - SEARCH_SLACK_BLOCKS : Number((await chain.head()).number) - LEGACY_LOOKBACK_BLOCKS
      const event = await chain.findAuthorizationEvent(payer, nonce, BigInt(Math.max(0, from)))
      if (!event) return 'pending' // spent, but the node's logs do not show it yet
      if (event.kind === 'canceled') return recordFailure(row, REASONS.canceled)
      const proof = await chain.prove(event.hash, expected)
      if (proof?.kind === 'paid') {
        await record(row, proof)
        return 'settled'
      }
      if (proof?.kind === 'used-otherwise') return recordFailure(row, REASONS.usedElsewhere)
      return 'pending' // the event and its receipt disagree (a lagging node): look again later
    }
    // Unused. Our only transaction for this attempt was mined without using it: nothing else can land.
    if (ownTransactionFinal) return recordFailure(row, REASONS.reverted)
    const head = await chain.head()
    if (head.timestamp > BigInt(row.valid_before + EXPIRY_MARGIN_S)) return recordFailure(row, REASONS.expired)
    return 'pending'
  }

  async function decideSafely(row: PaymentRow): Promise<Fate> {
    try {
      return await decide(row)
    } catch (error) {
      d.log('payment: chain not readable, left pending', { payment: row.id, cause: describeFailure(error) })
      return 'pending'
    }
  }

  const reread = async (auth: Authorization) => (await read.payments.byKey(auth.from, auth.nonce))!

  function paid(row: PaymentRow): PayOutcome {
    return { kind: 'paid', payer: checksumAddress(row.payer_lc), transaction: row.transaction_hash! }
  }

  /** An authorization that already paid is not a ticket: the payer reads again by signing in. */
  function alreadySettled(row: PaymentRow, entry: EntryRecord, signer: string | null): PayOutcome {
    if (row.entry_id === entry.id && signer?.toLowerCase() === row.payer_lc) return paid(row)
    return { kind: 'refused', reason: row.entry_id === entry.id ? REASONS.alreadyBought : REASONS.usedForAnother }
  }

  /** The outcome of a row whose settlement this request did not start. */
  function outcomeOf(row: PaymentRow, entry: EntryRecord, signer: string | null): PayOutcome {
    if (row.status === 'settled') return alreadySettled(row, entry, signer)
    if (row.status === 'failed') return { kind: 'refused', reason: row.error ?? REASONS.settlementFailed }
    return { kind: 'pending', reason: REASONS.sentPending }
  }

  /**
   * After a settlement attempt that may have sent a transaction: settled → this request is served; failed → 402 with
   * the chain's reason; otherwise 503 pending, whatever the settler said. A settler's refusal after sending (its
   * receipt wait timed out, a facilitator's success:false) is no verdict: the transaction can still be mined.
   */
  async function concludeFromChain(row: PaymentRow): Promise<PayOutcome> {
    const fate = await decideSafely(row)
    const now = (await read.payments.byKey(row.payer_lc, row.nonce))!
    if (fate === 'settled') return paid(now)
    if (fate === 'failed') return { kind: 'refused', reason: now.error ?? REASONS.settlementFailed }
    return { kind: 'pending', reason: REASONS.notConfirmed }
  }

  /** `startedOver`: a second go, after another payment of the purchase was decided (it waits no more). */
  async function settleOnce(payment: Payment, entry: EntryRecord, requirements: unknown, tag: PriceTag, signer: string | null, startedOver = false): Promise<PayOutcome> {
    const auth = payment.authorization
    const refused = (reason: string): PayOutcome => ({ kind: 'refused', reason })
    const unavailable = (what: string, cause: string): PayOutcome => {
      d.log('payment backend unavailable', { what, cause, payer: auth.from.toLowerCase() })
      return { kind: 'unavailable', reason: `payment_backend_unavailable: ${what}; nothing was charged, retry the same payment later` }
    }

    let row = await read.payments.byKey(auth.from, auth.nonce)
    if (row?.status === 'settled') return alreadySettled(row, entry, signer)
    if (row?.status === 'pending') {
      // Left by an earlier attempt (a crash, a pending answer), or being settled by another instance: only the chain
      // decides, and it is never sent twice.
      await decideSafely(row)
      row = await reread(auth)
      if (row.status === 'pending' && settlingElsewhere(row) && await settledElsewhere(() => reread(auth))) row = await reread(auth)
      if (row.status !== 'failed') return outcomeOf(row, entry, signer)
    }

    const [verified, head] = await Promise.all([d.engine.verify(payment, requirements), chain.head().catch((error: unknown) => error)])
    if (verified.kind === 'backend') return unavailable('the payment could not be verified', verified.cause)
    if (verified.kind === 'invalid') return refused(verified.reason)
    const payer = checksumAddress(auth.from)
    // The feed owner, and a wallet that already bought the entry, are served without being charged; their
    // authorization (fresh, verified, never published) stays unused.
    if (payer.toLowerCase() === tag.payTo.toLowerCase() || (await read.purchases.owns(payer, entry.id))) return { kind: 'paid', payer, transaction: null }
    if (head instanceof Error || !head) return unavailable('the chain could not be read', describeFailure(head))
    const submittedBlock = Number((head as { number: bigint }).number)

    const now = nowSeconds()
    const kept = paymentRecord(payment, requirements)
    // The pending row is the lock: only the request whose write made (or re-opened) it settles; another that raced it
    // (another instance, on a shared database) answers from the row.
    const failed = row
    // On an engine with concurrent writers, a re-opened failed row can meet another pending payment of the purchase
    // at the unique index (its NOT EXISTS saw none): that too means another payment is settling.
    const mine = await d.records.transact((tx) => failed
      ? tx.payments.retryFailed(failed.id, entry.id, kept.payload, kept.requirements, submittedBlock, d.records.instance, now)
      : tx.payments.insertPending({
        id: newId(), payer_lc: auth.from.toLowerCase(), nonce: auth.nonce, entry_id: entry.id, pay_to: tag.payTo, amount: BigInt(tag.amount),
        ...kept, valid_before: Number(auth.validBefore), submitted_block: submittedBlock, settler: d.records.instance, now,
      })).catch((error: unknown) => {
        if (isUniqueViolation(error)) return false
        throw error
      })
    if (!mine) {
      let now = await read.payments.byKey(auth.from, auth.nonce)
      if (!now || now.status === 'failed') {
        // No row of its own (or its failed one not re-opened): another payment of this purchase is being settled. On a
        // shared database that may be another instance's: once it is decided, this one starts over (and is served
        // free if that one bought the entry).
        const other = await read.payments.pendingPurchase(auth.from, entry.id)
        if (startedOver || !other) return { kind: 'pending', reason: REASONS.purchasePending }
        // Settled by nobody now (an earlier request here answered 503, or its instance is gone): the chain decides it
        // at once, so a buyer whose first payment was mined since is served by the next try, free.
        const over = settlingElsewhere(other)
          ? await settledElsewhere(() => read.payments.pendingPurchase(auth.from, entry.id))
          : (await decideSafely(other)) !== 'pending'
        return over ? settleOnce(payment, entry, requirements, tag, signer, true) : { kind: 'pending', reason: REASONS.purchasePending }
      }
      // The same authorization, sent to another instance at the same moment: its outcome (not served by it).
      if (now.status === 'pending' && settlingElsewhere(now) && await settledElsewhere(() => reread(auth))) now = await reread(auth)
      return outcomeOf(now, entry, signer)
    }
    row = await reread(auth)
    const id = row.id

    const outcome = await d.engine.settle(payment, requirements, (hash) => d.records.transact((tx) => tx.payments.recordSigned(id, hash, nowSeconds())).then(() => {}))
    row = await reread(auth)
    if (outcome.kind === 'claimed') {
      d.afterSettle?.()
      try {
        const proof = await chain.prove(outcome.hash, expectedOf(row))
        if (proof?.kind === 'paid') {
          await record(row, proof)
          return paid(await reread(auth))
        }
        d.log(proof ? 'payment: the settler claimed a transaction that does not pay this entry' : 'payment: the settler claimed a transaction the chain does not show yet', { payment: id, transaction: outcome.hash })
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
    d.log('payment: settlement not confirmed by the settler, the chain decides', { payment: id, ...(outcome.kind === 'refused' ? { reason: outcome.reason } : { cause: outcome.cause }) })
    return concludeFromChain(row)
  }

  /**
   * Pays for `entry` (at the price `tag` states) with the payment a request carried. `signer` is the signed-in
   * wallet, if any. Requirements are rebuilt from the tag; nothing in the payment is trusted as a requirement.
   */
  async function pay(payment: PaymentOrRefusal, entry: EntryRecord, tag: PriceTag, signer: string | null): Promise<PayOutcome> {
    if ('refused' in payment) return { kind: 'refused', reason: payment.refused }
    const auth = payment.authorization
    const checked = requirementsFor(payment, d.network, tag)
    if ('refused' in checked) return { kind: 'refused', reason: checked.refused }
    const { requirements } = checked

    const existing = await read.payments.byKey(auth.from, auth.nonce)
    if (existing?.status === 'settled') return alreadySettled(existing, entry, signer)
    // Concurrent submissions of one authorization: one settles; the others learn the outcome but are not served
    // by it (the payment header is not a bearer ticket).
    const key = `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`
    const running = inFlight.get(key)
    if (running) {
      const first = await running.catch(() => null)
      if (first && first.kind !== 'paid') return first
      const row = await read.payments.byKey(auth.from, auth.nonce)
      return row ? outcomeOf(row, entry, signer) : { kind: 'refused', reason: REASONS.inUse }
    }
    // A buyer's second authorization for the same entry waits for the first: once that one has bought the
    // entry, the second is served without being charged.
    const purchaseKey = `${auth.from.toLowerCase()}:${entry.id}`
    const attempt = (async () => {
      for (let other = buying.get(purchaseKey); other; other = buying.get(purchaseKey)) await other.catch(() => {})
      const settling = settleOnce(payment, entry, requirements, tag, signer)
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

    async pay(payment: PaymentOrRefusal, entry: EntryRecord, tag: PriceTag, signer: string | null = null): Promise<PayOutcome> {
      const outcome = await pay(payment, entry, tag, signer)
      outcomes[outcome.kind]++
      return outcome
    },

    outcomes: (): Readonly<Record<PayOutcome['kind'], number>> => outcomes,

    /** At start and periodically: let the chain decide every pending payment that no request is settling. */
    async reconcilePending(): Promise<Record<Fate, number>> {
      const counts = { settled: 0, failed: 0, pending: 0 }
      for (const row of await read.payments.pending()) {
        if (inFlight.has(`${row.payer_lc}:${row.nonce}`) || settlingElsewhere(row, false)) continue
        counts[await decideSafely(row)]++
      }
      return counts
    },
  }
}
export type PurchaseService = ReturnType<typeof purchaseService>
