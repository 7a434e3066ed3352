// Buying a paid entry with an x402 payment, exactly once: checked, verified, written as pending, settled, then
// recorded (transaction, totals, entitlement) in one SQLite transaction. Interrupted payments are reconciled
// from the chain.
import type { Db } from '../store/db.ts'
import type { PaymentRow, PaymentStore, PurchaseStore } from '../store/payments.ts'
import type { TransactionStore } from '../store/transactions.ts'
import type { WalletStore } from '../store/wallets.ts'
import type { EntryRow } from '../store/entries.ts'
import type { FeedRow } from '../store/feeds.ts'
import type { NetworkInfo } from '../config.ts'
import type { PaymentEngine, SettleResult } from '../chain/x402.ts'
import { v1Requirement, v2Challenge, type PriceTag } from '../chain/requirements.ts'
import { checksumAddress, isWalletAddress } from '../chain/signatures.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'

export interface Settlement { success: boolean; transaction: string; network: string; payer: string; errorReason?: string }
export type PayOutcome =
  | { ok: true; payer: string; settlement: Settlement; version: 1 | 2 }
  | { ok: false; reason: string; version: 1 | 2; settlement?: Settlement }

interface Authorization { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string }
interface Decoded { version: 1 | 2; raw: Record<string, unknown>; authorization: Authorization; signature: string }

interface Deps {
  db: Db
  payments: PaymentStore
  purchases: PurchaseStore
  transactions: TransactionStore
  wallets: WalletStore
  engine: PaymentEngine
  network: NetworkInfo
  log: (msg: string, fields?: Record<string, unknown>) => void
  /** Fault injection for tests: called between a successful settlement and its recording. */
  afterSettle?: () => void
}

const DIGITS = /^\d{1,78}$/
// validBefore must leave the settlement time to land (the facilitator wants ≥ 6 s).
const MIN_VALIDITY_LEFT_S = 6

function decode(raw: string): Decoded | string {
  let json: Record<string, unknown>
  try {
    json = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'))
  } catch {
    return 'invalid_payload: the payment header is not base64 JSON'
  }
  if (!json || typeof json !== 'object') return 'invalid_payload'
  const version = json.x402Version
  if (version !== 1 && version !== 2) return 'invalid_x402_version'
  const payload = json.payload as { authorization?: Record<string, unknown>; signature?: unknown } | undefined
  const a = payload?.authorization
  if (!a || typeof payload?.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(payload.signature)) return 'invalid_payload: missing authorization or signature'
  const fields = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const
  if (fields.some((f) => typeof a[f] !== 'string')) return 'invalid_payload: authorization fields must be strings'
  const auth = a as unknown as Authorization
  if (!isWalletAddress(auth.from) || !isWalletAddress(auth.to)) return 'invalid_payload: bad address'
  if (!DIGITS.test(auth.value) || !DIGITS.test(auth.validAfter) || !DIGITS.test(auth.validBefore)) return 'invalid_payload: bad number'
  if (!/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return 'invalid_payload: bad nonce'
  return { version, raw: json, authorization: auth, signature: payload.signature }
}

export function purchaseService(d: Deps) {
  const inFlight = new Map<string, Promise<PayOutcome>>() // by authorization (payer, nonce)
  const buying = new Map<string, Promise<PayOutcome>>() // by purchase (payer, entry)
  const caip2 = `eip155:${d.network.chainId}`

  /** One SQLite transaction: payment settled, ledger row, totals, payer wallet, entitlement. */
  function record(row: Pick<PaymentRow, 'id' | 'payer_lc' | 'entry_id' | 'pay_to' | 'amount'>, hash: string): boolean {
    return d.db.transaction(() => {
      const now = nowSeconds()
      if (!d.payments.markSettled(row.id, hash, now)) return false // recorded already (by a concurrent reconciler)
      const payer = checksumAddress(row.payer_lc)
      const walletId = d.wallets.ensure(newId(), payer, d.network.name, now)
      const transactionId = newId()
      const amount = BigInt(row.amount)
      d.transactions.insert({ id: transactionId, piid: row.id, payer, pay_to: checksumAddress(row.pay_to), amount, asset: 'USDC', entry_id: row.entry_id, transaction_hash: hash, created_at: now })
      d.purchases.addToTotals(row.entry_id, amount)
      d.purchases.grant(walletId, row.entry_id, transactionId, now)
      return true
    }).immediate()
  }

  /** After a failed or interrupted settlement: did the transfer happen on chain? Records it if so. */
  async function reconcile(row: PaymentRow): Promise<'settled' | 'failed' | 'unused' | 'unreachable'> {
    try {
      const from = row.payer_lc as `0x${string}`
      if (await d.engine.authorizationUsed(from, row.nonce as `0x${string}`)) {
        const hash = await d.engine.findSettlement(from, row.nonce as `0x${string}`)
        if (!hash) return 'unreachable'
        record(row, hash)
        return 'settled'
      }
      if (row.valid_before <= nowSeconds()) {
        d.payments.markFailed(row.id, 'authorization expired before settlement', nowSeconds())
        return 'failed'
      }
      return 'unused'
    } catch (error) {
      d.log('reconcile: chain not reachable', { payment: row.id, error: String((error as Error).message).split('\n')[0] })
      return 'unreachable'
    }
  }

  const settlementOf = (row: PaymentRow, version: 1 | 2): Settlement => ({
    success: true, transaction: row.transaction_hash!, network: version === 2 ? caip2 : d.network.name, payer: checksumAddress(row.payer_lc),
  })

  async function settleOnce(decoded: Decoded, entry: EntryRow, requirements: unknown, tag: PriceTag): Promise<PayOutcome> {
    const { version, authorization: auth } = decoded
    const fail = (reason: string, settlement?: Settlement): PayOutcome => ({ ok: false, reason, version, settlement })
    // Left pending by an interrupted attempt: the chain says whether it went through (before verify, which would
    // refuse an authorization that was already used).
    const interrupted = d.payments.byKey(auth.from, auth.nonce)
    if (interrupted?.status === 'pending' && (await reconcile(interrupted)) === 'settled') return outcomeOfSettled(decoded, entry)
    const verified = await d.engine.verify(decoded.raw, requirements)
    if (!verified.isValid) return fail(verified.invalidReason ?? 'invalid_payment')
    const payer = checksumAddress(auth.from)
    // The feed owner, and a wallet that already bought the entry, are served without being charged; their
    // authorization stays unused (an owner paying itself would only inflate its own statistics).
    if (payer.toLowerCase() === tag.payTo.toLowerCase() || d.purchases.owns(payer, entry.id)) {
      return { ok: true, payer, version, settlement: { success: true, transaction: '', network: version === 2 ? caip2 : d.network.name, payer } }
    }

    const now = nowSeconds()
    const payloadJson = JSON.stringify(decoded.raw)
    const requirementsJson = JSON.stringify(requirements)
    let row = d.payments.byKey(auth.from, auth.nonce)
    if (!row) {
      d.payments.insertPending({
        id: newId(), payer_lc: auth.from.toLowerCase(), nonce: auth.nonce, entry_id: entry.id, pay_to: tag.payTo, amount: BigInt(tag.amount),
        x402_version: version, payload: payloadJson, requirements: requirementsJson, valid_before: Number(auth.validBefore), now,
      })
    } else if (row.status === 'failed') {
      d.payments.retryFailed(row.id, entry.id, payloadJson, requirementsJson, now)
    } else if (row.status === 'pending' && row.entry_id !== entry.id) {
      // Unused on chain (checked above) and now sent for another entry: the attempt is re-pointed at this one.
      d.payments.markFailed(row.id, 'superseded', now)
      d.payments.retryFailed(row.id, entry.id, payloadJson, requirementsJson, now)
    }
    row = d.payments.byKey(auth.from, auth.nonce)!
    if (row.status !== 'pending') return outcomeOfSettled(decoded, entry)

    const result: SettleResult = await d.engine.settle(decoded.raw, requirements)
    if (result.success) {
      d.afterSettle?.()
      record(row, result.transaction)
      return { ok: true, payer, version, settlement: { success: true, transaction: result.transaction, network: result.network, payer } }
    }
    // Not settled as far as the facilitator knows; the chain decides whether anything moved.
    const state = await reconcile(d.payments.byKey(auth.from, auth.nonce)!)
    if (state === 'settled') return outcomeOfSettled(decoded, entry)
    // Unused on chain: nothing moved, and the same authorization may be sent again. Unreachable: stays pending
    // for the reconciler, since the transfer may still land.
    if (state === 'unused') d.payments.markFailed(row.id, result.errorReason ?? 'settlement_failed', nowSeconds())
    const reason = state === 'unreachable' ? 'settlement_pending: the chain could not be reached; retry later' : (result.errorReason ?? 'settlement_failed')
    return fail(reason, { success: false, transaction: result.transaction ?? '', network: result.network ?? d.network.name, payer, errorReason: reason })
  }

  /** The payment's row is settled: the same payment (same signature) for the same entry is served again, free. */
  function outcomeOfSettled(decoded: Decoded, entry: EntryRow): PayOutcome {
    const row = d.payments.byKey(decoded.authorization.from, decoded.authorization.nonce)
    if (row?.status !== 'settled') return { ok: false, reason: row?.error ?? 'settlement_failed', version: decoded.version }
    const stored = JSON.parse(row.payload) as { payload?: { signature?: string } }
    if (row.entry_id !== entry.id || stored.payload?.signature?.toLowerCase() !== decoded.signature.toLowerCase()) {
      return { ok: false, reason: 'duplicate_settlement: this authorization was already used', version: decoded.version }
    }
    return { ok: true, payer: checksumAddress(row.payer_lc), version: decoded.version, settlement: settlementOf(row, decoded.version) }
  }

  return {
    owns: (address: string, entryId: string) => d.purchases.owns(address, entryId),

    /** Requirements are rebuilt from the entry; nothing in the payload is trusted as a requirement. */
    async pay(header: string, feed: FeedRow, entry: EntryRow, tag: PriceTag): Promise<PayOutcome> {
      const decoded = decode(header)
      if (typeof decoded === 'string') return { ok: false, reason: decoded, version: 1 }
      const { version, authorization: auth } = decoded
      const fail = (reason: string): PayOutcome => ({ ok: false, reason, version })
      let requirements: unknown
      if (version === 1) {
        if (decoded.raw.scheme !== 'exact') return fail('invalid_scheme')
        if (decoded.raw.network !== d.network.name) return fail('invalid_network')
        requirements = v1Requirement(d.network, tag)
      } else {
        const accepted = decoded.raw.accepted as { scheme?: unknown; network?: unknown } | undefined
        if (accepted?.scheme !== 'exact') return fail('invalid_scheme')
        if (accepted.network !== caip2) return fail('invalid_network')
        requirements = v2Challenge(d.network, tag, '').accepts[0]
      }
      // Cheap, deterministic refusals before any call to the facilitator or the chain.
      if (auth.to.toLowerCase() !== feed.owner_wallet_address.toLowerCase()) return fail('invalid_exact_evm_payload_recipient_mismatch')
      if (BigInt(auth.value) !== BigInt(tag.amount)) return fail('invalid_exact_evm_payload_authorization_value')
      const now = nowSeconds()
      if (BigInt(auth.validBefore) < BigInt(now + MIN_VALIDITY_LEFT_S)) return fail('invalid_exact_evm_payload_authorization_valid_before')
      if (BigInt(auth.validAfter) > BigInt(now)) return fail('invalid_exact_evm_payload_authorization_valid_after')

      const existing = d.payments.byKey(auth.from, auth.nonce)
      if (existing?.status === 'settled') return outcomeOfSettled(decoded, entry)
      // Concurrent submissions of one authorization share one settlement.
      const key = `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`
      const running = inFlight.get(key)
      if (running) {
        const outcome = await running
        return outcome.ok ? outcomeOfSettled(decoded, entry) : outcome
      }
      // A buyer's second authorization for the same entry waits for the first: once that one has bought the
      // entry, the second is served without being charged.
      const purchaseKey = `${auth.from.toLowerCase()}:${entry.id}`
      const attempt = (async () => {
        for (let other = buying.get(purchaseKey); other; other = buying.get(purchaseKey)) await other.catch(() => {})
        const settling = settleOnce(decoded, entry, requirements, tag)
        buying.set(purchaseKey, settling)
        try {
          return await settling
        } finally {
          if (buying.get(purchaseKey) === settling) buying.delete(purchaseKey)
        }
      })().finally(() => inFlight.delete(key))
      inFlight.set(key, attempt)
      return attempt
    },

    /** At start and periodically: finish what a crash interrupted. */
    async reconcilePending(): Promise<Record<'settled' | 'failed' | 'unused' | 'unreachable', number>> {
      const counts = { settled: 0, failed: 0, unused: 0, unreachable: 0 }
      for (const row of d.payments.pending()) {
        const key = `${row.payer_lc}:${row.nonce}`
        if (inFlight.has(key)) continue
        counts[await reconcile(row)]++
      }
      return counts
    },
  }
}
export type PurchaseService = ReturnType<typeof purchaseService>
