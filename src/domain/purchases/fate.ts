// A pending payment's fate, as the chain decides it, and its writing down: settled (ledger row, totals, entitlement,
// in one transaction) when a transaction carrying AuthorizationUsed(payer, nonce) also moved the price to the owner;
// failed when the authorization was spent otherwise or cancelled, or is still unused after validBefore by chain time;
// pending while the chain cannot tell yet.
import { soldBy, type PaymentRow } from '../../store/payments.ts'
import type { Proof } from '../../chain/settlement-proof.ts'
import { describeFailure } from '../../chain/rpc.ts'
import { REASONS } from '../../chain/x402/reasons.ts'
import { checksumAddress } from '../../chain/signatures.ts'
import { newId } from '../../lib/ids.ts'
import { nowSeconds } from '../../lib/clock.ts'
import type { PurchaseDeps } from './deps.ts'

export type Fate = 'settled' | 'failed' | 'pending'

// An unused authorization is dead once the chain's clock has passed validBefore; the margin covers reorgs.
const EXPIRY_MARGIN_S = 60
// Searches for an authorization's event start a few blocks before we asked for settlement.
const SEARCH_SLACK_BLOCKS = 5
// Rows written before the submission block was recorded: search this far back.
const LEGACY_LOOKBACK_BLOCKS = 50_000

export function chainFate(d: PurchaseDeps) {
  /** The engine of the network a payment was made on. */
  const engineOf = (row: PaymentRow) => {
    const engine = d.engines.named(row.network)
    if (!engine) throw new Error(`payments on ${row.network} are not settled by this server (TRELLIS_NETWORKS)`)
    return engine
  }

  const expectedOf = (row: PaymentRow) => ({
    token: engineOf(row).network.usdcAddress,
    payer: row.payer_lc,
    payTo: row.pay_to,
    amount: BigInt(row.amount),
    nonce: row.nonce,
  })

  /** One transaction: payment settled, ledger row, totals, payer wallet, entitlement (the entry, or the pass's time). */
  async function record(row: PaymentRow, proof: Extract<Proof, { kind: 'paid' }>): Promise<void> {
    const sold = soldBy(row)
    const recorded = await d.records.transact(async (tx) => {
      const now = nowSeconds()
      if (!(await tx.payments.markSettled(row.id, proof.hash, Number(proof.block), now))) return false // recorded already
      const payer = checksumAddress(row.payer_lc)
      const walletId = await tx.wallets.ensure(newId(), payer, engineOf(row).network.name, now)
      const transactionId = newId()
      const amount = BigInt(row.amount)
      // The entry's and feed's rows before the ledger row's tallies lock the addresses' rows: creating an entry takes
      // them in that order too, so the two never wait on each other in a cycle (PostgreSQL would break it as a deadlock).
      let feedId: string
      if (sold.entry_id !== null) {
        await tx.purchases.addToTotals(sold.entry_id, amount)
        feedId = (await tx.entries.byId(sold.entry_id))!.feed_id
      } else {
        feedId = sold.pass_feed_id
        await tx.purchases.addToFeedTotals(feedId, amount)
      }
      await tx.transactions.insert({
        id: transactionId,
        piid: row.id,
        payer,
        pay_to: checksumAddress(row.pay_to),
        amount,
        asset: 'USDC',
        entry_id: sold.entry_id,
        transaction_hash: proof.hash,
        created_at: now,
        kind: sold.entry_id !== null ? 'entry' : 'pass',
        feed_id: feedId,
        network: engineOf(row).network.name,
      })
      if (sold.entry_id !== null) await tx.purchases.grant(walletId, sold.entry_id, transactionId, now)
      else
        await tx.passes.grant({
          id: newId(),
          feed_id: feedId,
          holder_lc: row.payer_lc,
          duration_s: sold.pass_duration_s,
          transaction_id: transactionId,
          now,
        })
      return true
    })
    if (!recorded) return
    d.logInfo?.('payment settled', {
      ...(sold.entry_id !== null ? { entry: sold.entry_id } : { pass_of_feed: sold.pass_feed_id }),
      payer: checksumAddress(row.payer_lc),
      pay_to: checksumAddress(row.pay_to),
      amount: row.amount,
      transaction: proof.hash,
      payment: row.id,
    })
  }

  async function recordFailure(row: PaymentRow, reason: string): Promise<Fate> {
    await d.records.transact((tx) => tx.payments.markFailed(row.id, reason, nowSeconds()))
    d.log('payment failed', { payment: row.id, reason })
    return 'failed'
  }

  /** What the chain says about a payment. Throws when the chain cannot be read. */
  async function decide(row: PaymentRow): Promise<Fate> {
    const chain = engineOf(row).chain
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
      const from =
        row.submitted_block !== null
          ? row.submitted_block - SEARCH_SLACK_BLOCKS
          : Number((await chain.head()).number) - LEGACY_LOOKBACK_BLOCKS
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

  /** The chain's decision, or 'pending' when the chain cannot be read now (the row waits for the next look). */
  async function decideSafely(row: PaymentRow): Promise<Fate> {
    try {
      return await decide(row)
    } catch (error) {
      d.log('payment: chain not readable, left pending', { payment: row.id, cause: describeFailure(error) })
      return 'pending'
    }
  }

  return { expectedOf, record, decideSafely, engineOf }
}
export type ChainFate = ReturnType<typeof chainFate>
